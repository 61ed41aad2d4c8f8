import type { Request, Response } from 'express';
import { hasBody } from './body-length.js';
import type { ApiError } from './problem.js';
import { statusOf, toProblem } from './problem.js';
import type { Reply } from './route.js';

/** What made a request fail on the server's side, for its log line; never in the response. */
export interface Fault {
  readonly message: string;
  readonly code?: string;
  readonly stack?: string;
}

/** The fault `sendProblem` answered 500 for, if any (see `faultOf`): the request's log line reports it. */
export const faultOf = (res: Response): Fault | undefined => (res.locals as { fault?: Fault }).fault;

const describeCause = (cause: unknown): Fault => {
  if (!(cause instanceof Error)) return { message: String(cause).slice(0, 1000) };
  const code = (cause as { code?: unknown }).code;
  return { message: cause.message.slice(0, 1000), ...(typeof code === 'string' ? { code } : {}), ...(cause.stack ? { stack: cause.stack } : {}) };
};

/** Keeps what made this request fail, for its log line: the client learns only the requestId; the operator finds the cause under it. */
export const noteFault = (res: Response, cause: unknown): void => {
  (res.locals as { fault?: Fault }).fault = describeCause(cause);
};

/** A rejection as problem+json, carrying the request's id (and for a rate limit, when to come back). */
export const sendProblem = (res: Response, e: ApiError): void => {
  // A rejection decided while a body was still arriving (a read timeout) may already have been answered.
  if (res.headersSent) return;
  if (e._tag === 'StoreFailure' || e._tag === 'MailUnavailable') noteFault(res, e.cause);
  if (e._tag === 'RateLimited' || e._tag === 'ServerBusy') res.setHeader('Retry-After', String(e.retryAfterS));
  res.status(statusOf(e)).type('application/problem+json').send(JSON.stringify(toProblem(e, String(res.locals.requestId))));
};

/**
 * Answers a rejection decided before the body was read. The unread rest of the body is not wanted: the
 * connection closes after the answer instead of draining it.
 */
export const rejectEarly = (req: Request, res: Response, e: ApiError): void => {
  if (hasBody(req) && !req.complete) res.setHeader('Connection', 'close');
  sendProblem(res, e);
};

/** A handler's answer: JSON, or bytes shown inline under their file name. */
export const sendReply = (res: Response, reply: Reply): void => {
  if (reply.kind === 'json') return void res.status(reply.status).json(reply.body);
  res.status(reply.status).type(reply.contentType);
  if (reply.filename) res.setHeader('Content-Disposition', `inline; filename="${reply.filename.replace(/[^\x20-\x7e]|"/g, '_')}"`);
  res.end(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
};
