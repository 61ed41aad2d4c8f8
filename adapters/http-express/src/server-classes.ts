import http from 'node:http';
import type express from 'express';

export interface ServerClasses {
  readonly IncomingMessage: typeof http.IncomingMessage;
  readonly ServerResponse: typeof http.ServerResponse;
}

/**
 * Classes for Node's HTTP (or HTTPS) server to make this app's requests and responses with, from the start, as
 * instances of the app's own `request` and `response` prototypes. Call it once per app, before it serves.
 *
 * Why: Express gives every request and response its app's prototypes with `Object.setPrototypeOf` as they enter
 * the app. V8 then treats the object's hidden class as detached from the tree it keeps of them, and caches no
 * transition from it: every property added afterwards (`req.params`, `req.body`, `res.locals`, `res.statusCode`…)
 * makes new hidden classes for that one object, so no property cache on the way (Express's, Node's HTTP code's,
 * ours) ever sees the same class twice and each access goes the slow way through the runtime. Counted with
 * callgrind that was most of an Express request's work (expressjs/express#5998). Made with the prototype Express
 * then gives them, the objects keep their hidden classes: `setPrototypeOf` with the prototype an object already
 * has changes nothing.
 *
 * How: each class extends Node's own; its prototype takes the place of `app.request` (`app.response`), with
 * Express's methods behind it and `app` on it, as Express's own has. The objects are what they were: instances of
 * Node's classes with Express's methods. A sub-app mounted inside this app still changes the prototype, as before.
 *
 * @example
 * const server = https.createServer({ ...serverClassesFor(app), key, cert }, app);
 */
export const serverClassesFor = (app: express.Express): ServerClasses => {
  class Request extends http.IncomingMessage {}
  class Response extends http.ServerResponse {}
  adopt(Request.prototype, app.request, app);
  adopt(Response.prototype, app.response, app);
  app.request = Request.prototype as unknown as typeof app.request;
  app.response = Response.prototype as unknown as typeof app.response;
  return { IncomingMessage: Request, ServerResponse: Response as unknown as typeof http.ServerResponse };
};

/** `proto` in the place of Express's app prototype `current`: the same prototype behind it, and `app` on it. */
const adopt = (proto: object, current: object, app: express.Express): void => {
  Object.setPrototypeOf(proto, Object.getPrototypeOf(current));
  // As Express defines it on its own (express/lib/express.js).
  Object.defineProperty(proto, 'app', { configurable: true, enumerable: true, writable: true, value: app });
};

/**
 * Express's own `app.listen` (the same arguments; a callback is also called with a failed listen's error), on a
 * server made with `serverClassesFor(app)`.
 */
export const listenWithAppClasses = (app: express.Express): ((...args: unknown[]) => http.Server) => {
  const classes = serverClassesFor(app);
  return (...args) => {
    const server = http.createServer(classes, app);
    const last = args[args.length - 1];
    if (typeof last === 'function') {
      let called = false;
      const once = (...a: unknown[]) => {
        if (called) return;
        called = true;
        (last as (...x: unknown[]) => void)(...a);
      };
      args[args.length - 1] = once;
      server.once('error', once);
    }
    return Reflect.apply(server.listen, server, args) as http.Server;
  };
};
