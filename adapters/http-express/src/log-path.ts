import type { Request, Response } from 'express';

/**
 * A segment after `signing/`, `sign/` or `embed/` is a signing (or embedding) token: a credential, never logged.
 * Wherever such a segment comes, and without regard to case: Express routes `/API/V1/SIGNING/…`, `/Sign/…` and
 * a request target of absolute form (`GET http://host/sign/… HTTP/1.1`) to the token handlers, and a mangled
 * link (`//sign/…`, `/x/../sign/…`) that reaches no handler still carries a real token.
 */
const TOKEN_SEGMENT = /(\/(?:signing|sign|embed)\/+)(?!assets(?:\/|$))[^/]+/gi;

/** The path of a request with any signing token replaced by `{token}` (the query string is never logged). */
export const redactPath = (path: string): string => path.replace(TOKEN_SEGMENT, '$1{token}');

/** Records the pattern of the route that answered (`/api/v1/signing/{token}/sign`), for the request log. */
export const setRoutePattern = (res: Response, pattern: string): void => {
  res.locals.routePattern = pattern;
};

/** What a log line says of a request: the route pattern (null when none matched) and the redacted path. */
export const loggedPath = (req: Request, res: Response): { route: string | null; path: string } => {
  const raw = req.originalUrl ?? req.url;
  const q = raw.indexOf('?');
  return { route: (res.locals.routePattern as string | undefined) ?? null, path: redactPath(q < 0 ? raw : raw.slice(0, q)) };
};
