import type { Request } from 'express';

/** Whether a request has a body at all (a length other than 0, or chunks). */
export const hasBody = (req: Request): boolean =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** Whether a body is sent compressed (`Content-Encoding`): it is held decoded, whatever its length. */
export const encoded = (req: Request): boolean => {
  const encoding = req.headers['content-encoding'];
  return encoding !== undefined && encoding.trim().toLowerCase() !== 'identity';
};

/** The body's declared length; NaN without a valid one (chunked). */
export const declaredLength = (req: Request): number => {
  const declared = Number(req.headers['content-length']);
  return Number.isSafeInteger(declared) && declared >= 0 ? declared : Number.NaN;
};

/**
 * Whether a body sent as is (no `Content-Encoding`) declares more than `limit` bytes. A body parser refuses it (413)
 * only once it has read all of it, and to a client that waits for `100 Continue` its reading is what sends the
 * `100`: such a body is refused from its headers instead, unread.
 */
export const declaredOver = (req: Request, limit: number): boolean => !encoded(req) && declaredLength(req) > limit;
