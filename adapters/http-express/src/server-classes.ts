import http from 'node:http';
import type { Duplex } from 'node:stream';
import type express from 'express';

export interface ServerClasses {
  readonly IncomingMessage: typeof http.IncomingMessage;
  readonly ServerResponse: typeof http.ServerResponse;
}

/** Each app's classes: a second call must not put another prototype in front of the first server's. */
const classesOf = new WeakMap<express.Express, ServerClasses>();

/**
 * Classes for Node's HTTP (or HTTPS) server to make this app's requests and responses with, from the start, as
 * instances of the app's own `request` and `response` prototypes.
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
 * How: each class extends Node's own; its prototype takes the place of `app.request` (`app.response`) and has the
 * app's former one behind it, so Express's methods, `app`, and whatever the app had put there (Express's guide
 * overrides `req.ip` that way) are all still found. The objects are what they were: instances of Node's classes
 * with the app's prototype chain. The classes are made once per app: every call for the same app returns the same
 * two. A sub-app mounted inside this app still changes the prototype, as before.
 *
 * @example
 * const server = https.createServer({ ...serverClassesFor(app), key, cert }, app);
 */
export const serverClassesFor = (app: express.Express): ServerClasses => {
  const made = classesOf.get(app);
  if (made !== undefined) return made;
  // Named as Node's own, which is what logs and `util.inspect` showed before.
  class IncomingMessage extends http.IncomingMessage {}
  class ServerResponse extends http.ServerResponse {}
  Object.setPrototypeOf(IncomingMessage.prototype, app.request);
  Object.setPrototypeOf(ServerResponse.prototype, app.response);
  app.request = IncomingMessage.prototype as unknown as typeof app.request;
  app.response = ServerResponse.prototype as unknown as typeof app.response;
  const classes: ServerClasses = { IncomingMessage, ServerResponse: ServerResponse as unknown as typeof http.ServerResponse };
  classesOf.set(app, classes);
  return classes;
};

/** What a server does with what never reaches the app. */
export interface OffRoute {
  /** A request its HTTP parser refused. */
  readonly clientError?: (err: Error & { code?: string }, socket: Duplex) => void;
  /** A `CONNECT` request (a proxy's tunnel), which Node never hands to the app; with no handler the connection is closed unanswered. */
  readonly connect?: (req: http.IncomingMessage, socket: Duplex) => void;
}

/**
 * A client that sends `Expect: 100-continue` waits for `100 Continue` before it sends its body. Node sends it as soon as
 * the headers arrive, before the app has looked at them; here it is sent when the app first reads the body, which it
 * does only once the caller is authenticated, allowed and admitted (an upload within the bytes held at once). So a
 * refused upload is answered before any of it is sent, and a client sees when its body is wanted. A request answered
 * without its body being read gets its final answer in place of the `100`.
 */
const continueOnRead = (req: http.IncomingMessage, res: http.ServerResponse) => {
  const stream = req as unknown as { _read: (size: number) => void };
  const read = stream._read;
  let asked = false;
  stream._read = function (this: unknown, size: number) {
    if (!asked) {
      asked = true;
      // After a final answer, Node drains what is left of the body: no `100` may follow that answer.
      if (!res.headersSent) res.writeContinue();
    }
    return read.call(this, size);
  };
};

/**
 * Express's own `app.listen` (the same arguments; a callback is also called with a failed listen's error), on a
 * server made with `serverClassesFor(app)`, which hands what its HTTP parser refuses and `CONNECT` requests to
 * `offRoute`, and answers `Expect: 100-continue` when the app reads the body (`continueOnRead`). A request
 * expecting something other than `100-continue` is served as if it expected nothing (RFC 9110 lets a server ignore
 * an expectation), where Node would answer a bare 417 that the app never sees.
 */
export const listenWithAppClasses = (app: express.Express, offRoute: OffRoute = {}): ((...args: unknown[]) => http.Server) => {
  const classes = serverClassesFor(app);
  return (...args) => {
    const server = http.createServer(classes, app);
    if (offRoute.clientError !== undefined) server.on('clientError', offRoute.clientError);
    if (offRoute.connect !== undefined) server.on('connect', offRoute.connect);
    server.on('checkExpectation', app);
    server.on('checkContinue', (req: http.IncomingMessage, res: http.ServerResponse) => {
      continueOnRead(req, res);
      app(req, res);
    });
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
