import type { NextFunction, Request, Response } from 'express';
import { serverBusy } from '@esig/core';
import type { ApiError } from './problem.js';
import { declaredLength, encoded } from './body-length.js';

/** The `Retry-After` of an upload turned away: uploads in flight finish within seconds, or time out. */
const RETRY_AFTER_S = 5;

/**
 * Bounds the bytes of the uploads a process holds at once. An upload is held in memory from its first byte until
 * its answer (the inspector reads it whole, the store writes it whole), and each key may start hundreds a
 * minute: without a bound, a few slow-to-read files followed by many large ones held gigabytes while they waited
 * their turn. Each upload reserves its `Content-Length` (the route's limit when it sends none, or sends it
 * compressed) before a byte of it is read; one that does not fit is answered 503 `server_busy` with `Retry-After`,
 * and nothing of it is read. The reservation ends when the upload is answered (its client there or not), or when its
 * body is cut off.
 */
export const uploadBudget = (o: {
  readonly limitBytes: number;
  /**
   * What one tenant (an organization in one mode) may hold of `limitBytes`. Reserving before the body arrives is what
   * keeps a refused upload unread, but it also lets a caller hold its reservation while sending nothing, for as long as
   * the body's read timeout: eight requests a minute of headers alone held the whole default budget, and every other
   * tenant's uploads were refused. With a share, a tenant can take at most its share from the others.
   */
  readonly perTenantBytes: number;
  /** The route's largest body: what a body of unknown length (chunked), or sent compressed, reserves. */
  readonly maxBytes: number;
  /** The caller's tenant, as a key; the middleware runs only for authenticated callers. */
  readonly tenantOf: (res: Response) => string;
  readonly reject: (req: Request, res: Response, e: ApiError) => void;
}) => {
  const { limitBytes, perTenantBytes, maxBytes, reject } = o;
  let held = 0;
  const byTenant = new Map<string, number>();
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    const declared = declaredLength(req);
    // A body sent compressed (Content-Encoding: gzip, deflate, br) is held decoded, up to the route's limit
    // whatever its length: a few hundred bytes of gzip make the largest upload. It reserves the limit, as one of
    // unknown length does. A length over the route's limit is refused (413) without reading it: reserve the limit.
    const bytes = encoded(req) || Number.isNaN(declared) ? maxBytes : Math.min(declared, maxBytes);
    const tenant = o.tenantOf(res);
    const tenantHeld = byTenant.get(tenant) ?? 0;
    if (held + bytes > limitBytes || tenantHeld + bytes > perTenantBytes)
      return reject(req, res, serverBusy(`The server is receiving too many uploads; retry after ${RETRY_AFTER_S} s.`, RETRY_AFTER_S));
    held += bytes;
    byTenant.set(tenant, tenantHeld + bytes);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      held -= bytes;
      const left = byTenant.get(tenant)! - bytes;
      if (left === 0) byTenant.delete(tenant);
      else byTenant.set(tenant, left);
    };
    // Held until the upload is answered: a client that leaves once it has sent its body leaves it with the server,
    // which still reads and stores it. (The connection's end is no sign: a response queued behind another on its
    // connection, pipelined, gets no 'close' of its own when the connection closes first.)
    const end = res.end;
    res.end = function (this: Response, ...args: unknown[]) {
      try {
        return (end as (...a: unknown[]) => Response).apply(this, args);
      } finally {
        release();
      }
    } as Response['end'];
    // A body cut off before its end is never handed on (the parser drops what it had): nothing is held then.
    req.once('close', () => {
      if (!req.complete) release();
    });
    next();
  };
  return middleware;
};
