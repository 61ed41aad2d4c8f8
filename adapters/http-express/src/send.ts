import type { Response } from 'express';
import type { ApiError } from './problem.js';
import { statusOf, toProblem } from './problem.js';
import type { Reply } from './route.js';

/** A rejection as problem+json, carrying the request's id (and for a rate limit, when to come back). */
export const sendProblem = (res: Response, e: ApiError): void => {
  // A rejection decided while a body was still arriving (a read timeout) may already have been answered.
  if (res.headersSent) return;
  if (e._tag === 'RateLimited') res.setHeader('Retry-After', String(e.retryAfterS));
  res.status(statusOf(e)).type('application/problem+json').send(JSON.stringify(toProblem(e, String(res.locals.requestId))));
};

/** A handler's answer: JSON, or bytes shown inline under their file name. */
export const sendReply = (res: Response, reply: Reply): void => {
  if (reply.kind === 'json') return void res.status(reply.status).json(reply.body);
  res.status(reply.status).type(reply.contentType);
  if (reply.filename) res.setHeader('Content-Disposition', `inline; filename="${reply.filename.replace(/[^\x20-\x7e]|"/g, '_')}"`);
  res.end(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
};
