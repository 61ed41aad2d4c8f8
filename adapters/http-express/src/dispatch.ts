import type { NextFunction, Request, RequestHandler, Response } from 'express';

/** A route as the table knows it: its method, its path (`{name}` for a parameter) and its handlers, in order. */
export interface TableRoute {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  readonly path: string;
  readonly handlers: readonly RequestHandler[];
}

export interface RouteMatch {
  readonly route: TableRoute;
  readonly params: Record<string, string>;
}

/** The methods the table answers; any other (HEAD, OPTIONS…) is left to Express. */
const METHODS: Readonly<Record<string, TableRoute['method']>> = { GET: 'get', POST: 'post', PATCH: 'patch', DELETE: 'delete' };

/** A parameter the table may hand out as it is: Express would decode nothing in it (no `%`). */
const PLAIN_PARAM = /^[A-Za-z0-9._~-]+$/;

interface Compiled {
  readonly route: TableRoute;
  /** Per segment: the literal, lower-cased, or the parameter's name. */
  readonly segments: ReadonlyArray<{ readonly literal: string } | { readonly param: string }>;
}

/**
 * The API's routes, matched in one step instead of through Express's router, which walks every layer
 * registered before the one that matches and runs each of a route's handlers through a `next` of its own:
 * at esig's rates, a measurable share of a small request (docs/performance.md).
 *
 * `match` answers only where Express itself would pick the same route with the same parameters; for
 * anything else it returns `null`, and the request goes on through Express's router, where the same
 * routes stay registered. It mirrors Express's defaults: routes in the order given, the first that
 * matches wins, literals compared without regard to case. What it does not mirror it declines: a path
 * with a trailing slash or an empty segment, a parameter that Express would percent-decode, a URL that
 * is not a plain path (absolute form), a method other than GET, POST, PATCH and DELETE.
 */
export const compileRouteTable = (routes: readonly TableRoute[]) => {
  const byMethodAndLength = new Map<string, Compiled[]>();
  for (const route of routes) {
    const segments = route.path
      .split('/')
      .slice(1)
      .map((s) => {
        const m = /^\{(\w+)\}$/.exec(s);
        return m ? { param: m[1]! } : { literal: s.toLowerCase() };
      });
    const k = `${route.method} ${segments.length}`;
    const list = byMethodAndLength.get(k) ?? [];
    list.push({ route, segments });
    byMethodAndLength.set(k, list);
  }

  const match = (method: string, url: string): RouteMatch | null => {
    const m = METHODS[method];
    if (m === undefined || url.charCodeAt(0) !== 47 /* / */) return null;
    const q = url.indexOf('?');
    const parts = (q < 0 ? url : url.slice(0, q)).split('/');
    parts.shift();
    const candidates = byMethodAndLength.get(`${m} ${parts.length}`);
    if (candidates === undefined) return null;
    for (const c of candidates) {
      let params: Record<string, string> | null = {};
      for (let i = 0; i < parts.length; i++) {
        const part = parts[i]!;
        const seg = c.segments[i]!;
        if ('literal' in seg) {
          if (part.toLowerCase() !== seg.literal) {
            params = null;
            break;
          }
        } else if (PLAIN_PARAM.test(part)) params[seg.param] = part;
        // Empty, or to be percent-decoded: Express's to judge.
        else return null;
      }
      if (params !== null) return { route: c.route, params };
    }
    return null;
  };

  /**
   * As middleware: a request that matches runs its route's handlers as Express would run them (each one's
   * `next()` calls the next, `next(err)` and a throw or a rejected promise go to the error handlers, a
   * falsy value is no error); any other goes on. Two things differ: `next('route')` and `next('router')`
   * are answered as errors, and `req.route` is not set (esig reads neither).
   */
  const middleware = (req: Request, res: Response, next: NextFunction): void => {
    const found = match(req.method, req.url);
    if (found === null) return next();
    req.params = found.params;
    run(found.route.handlers, 0, req, res, next);
  };

  return { match, middleware };
};

const run = (handlers: readonly RequestHandler[], i: number, req: Request, res: Response, done: NextFunction): void => {
  const h = handlers[i];
  // A route's last handler answers. Going on from here would enter Express's router at this middleware's
  // place and run the same route again: a bug, answered as one.
  if (h === undefined) return done(new Error(`the last handler of ${req.method} ${req.path} called next()`));
  // As Express's own route: a falsy value goes on to the next handler, anything else is an error. Except
  // 'route' and 'router', which would leave this route for the layers after it, and so, again, enter it.
  const next: NextFunction = (err?: unknown) =>
    err === 'route' || err === 'router'
      ? done(new Error(`a handler of ${req.method} ${req.path} called next('${err}'), which the route table does not support`))
      : err
        ? done(err)
        : run(handlers, i + 1, req, res, done);
  try {
    const r: unknown = h(req, res, next);
    if (r instanceof Promise) r.catch((e: unknown) => done(e || new Error('Rejected promise')));
  } catch (e) {
    next(e);
  }
};
