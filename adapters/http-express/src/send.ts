import type { Response } from 'express';
import type { ApiError } from './problem';
import { statusOf, toProblem } from './problem';
import type { Reply } from './route';

/** A rejection as problem+json, carrying the request's id. */
export const sendProblem = (res: Response, e: ApiError): void => {
  res.status(statusOf(e)).type('application/problem+json').send(JSON.stringify(toProblem(e, String(res.locals.requestId))));
};

/** A handler's answer: JSON, or bytes shown inline under their file name. */
export const sendReply = (res: Response, reply: Reply): void => {
  if (reply.kind === 'json') return void res.status(reply.status).json(reply.body);
  res.status(reply.status).type(reply.contentType);
  if (reply.filename) res.setHeader('Content-Disposition', `inline; filename="${reply.filename.replace(/[^\x20-\x7e]|"/g, '_')}"`);
  res.end(Buffer.from(reply.bytes.buffer, reply.bytes.byteOffset, reply.bytes.byteLength));
};
