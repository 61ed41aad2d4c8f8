import type { NextFunction, Request, Response } from 'express';
import { serverBusy } from '@esig/core';
import type { ApiError } from './problem.js';

/** The `Retry-After` of an upload turned away: uploads in flight finish within seconds, or time out. */
const RETRY_AFTER_S = 5;

/**
 * Bounds the bytes of the uploads a process holds at once. An upload is held in memory from its first byte until
 * its answer (the inspector reads it whole, the store writes it whole), and each key may start hundreds a
 * minute: without a bound, a few slow-to-read files followed by many large ones held gigabytes while they waited
 * their turn. Each upload reserves its `Content-Length` (the route's limit when it sends none), before a byte of it
 * is read; one that does not fit is answered 503 `server_busy` with `Retry-After`, and nothing of it is read. The
 * reservation ends with the response, however it ends.
 */
export const uploadBudget = (
  limitBytes: number,
  maxUploadBytes: number,
  reject: (req: Request, res: Response, e: ApiError) => void,
) => {
  let held = 0;
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    const declared = Number(req.headers['content-length']);
    // A length over the route's limit is refused (413) by the body parser without reading it: reserve the limit.
    const bytes = Number.isSafeInteger(declared) && declared >= 0 ? Math.min(declared, maxUploadBytes) : maxUploadBytes;
    if (held + bytes > limitBytes)
      return reject(req, res, serverBusy(`The server is receiving too many uploads; retry after ${RETRY_AFTER_S} s.`, RETRY_AFTER_S));
    held += bytes;
    const socket = req.socket;
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held -= bytes;
      socket.removeListener('close', release);
    };
    res.once('close', release);
    // A response queued behind another on its connection (pipelining) gets no 'close' of its own when the
    // connection closes first: the connection's 'close' ends it then.
    socket.once('close', release);
    next();
  };
  return Object.assign(middleware, { held: () => held });
};
