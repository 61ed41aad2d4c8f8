import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import express from 'express';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import type { NextFunction, Request, Response } from 'express';
import multer from 'multer';
import type { DomainError, Principal, RateDecision } from '@esig/core';
import { admitApiKey, authenticate, authenticateAccessToken, composeKeyAdmission, credentialId, principalBuckets, hasScope, keyIdOf, insufficientScope, validationFailed } from '@esig/core';
import { UploadForm } from './codecs.js';
import { decode, decodeEach } from './decode.js';
import type { EsigHttpDeps, EsigHttpOptions } from './deps.js';
import { buildOpenApi } from './openapi.js';
import type { ApiError } from './problem.js';
import { statusOf, toProblem } from './problem.js';
import type { Route, Upload, WriteOp } from './route.js';
import { SIGNING_BASE, toExpressPath } from './route.js';
import { buildRoutes } from './routes.js';
import { faultOf, rejectEarly, sendProblem, sendReply } from './send.js';
import { buildSignerRoutes, createSignerRouter } from './signer-routes.js';
import { answeredFromKey, idempotencyKeyOf, runWrite } from './write-pipeline.js';
import { createLogBuffer } from './log-buffer.js';
import { loggedPath, setRoutePattern } from './log-path.js';
import { mountSigningPage } from './signing-page.js';
import { MCP_PATH, createOAuthRouter } from './oauth-routes.js';
import { mountEmbedPage } from './embed-page.js';
import { listenWithAppClasses } from './server-classes.js';
import { uploadBudget } from './upload-budget.js';
import { declaredOver, hasBody } from './body-length.js';

interface Locals {
  requestId: string;
  principal: Principal | null;
  authError: DomainError | null;
  /** The address window's decision, when the OAuth paths have counted this request already. */
  addressDecision?: RateDecision;
}

const locals = (res: Response): Locals => res.locals as Locals;

const isJson = (text: unknown): boolean => typeof text === 'string' && E.isRight(E.tryCatch(() => JSON.parse(text) as unknown, () => null));

/** The key under which a tenant's (an organization's, in one mode) reservations are counted. */
const tenantKey = (p: Principal) => `${p.tenant.mode}:${p.tenant.orgId}`;

/**
 * Bounds how long a body may take to arrive, so a client trickling bytes cannot hold a connection (and the
 * buffered part of its body) for long: past `ms`, 408 and the connection is closed.
 */
export const bodyDeadline =
  (ms: number, answer: (res: Response, limitS: number) => void = (res, limitS) => sendProblem(res, { _tag: 'RequestTimeout', limitS })) =>
  (req: Request, res: Response, next: NextFunction): void => {
    if (!hasBody(req) || req.complete) return next();
    const timer = setTimeout(() => {
      if (req.complete || res.headersSent) return;
      res.setHeader('Connection', 'close');
      answer(res, ms / 1000);
      res.once('finish', () => req.destroy());
    }, ms);
    const clear = () => clearTimeout(timer);
    req.once('end', clear);
    res.once('close', clear);
    next();
  };

/** Turns a rejected Either into a problem response; Right values go to `onRight`. */
const respond = async <A>(res: Response, te: TE.TaskEither<ApiError, A>, onRight: (a: A) => void) => {
  const r = await te();
  if (E.isLeft(r)) sendProblem(res, r.left);
  else onRight(r.right);
};

/** The API as an Express application, and how to stop it. */
export interface EsigApp {
  readonly app: express.Express;
  /** Writes the request log entries still buffered and stops its timer; call after the server closed. */
  close(): Promise<void>;
}

/**
 * The esig REST API as an Express application. Every write route (POST/PATCH/DELETE) runs through the same
 * pipeline, so idempotency keys work on all of them with nothing enabled per route.
 *
 * @example
 * const { app, close } = createEsigApp(deps, defaultHttpOptions('https://sign.example.com'));
 * const server = app.listen(3000);
 * // on shutdown:
 * server.close(async () => close());
 */
export const createEsigApp = (deps: EsigHttpDeps, opts: EsigHttpOptions): EsigApp => {
  const app = express();
  // `app.listen` on a server whose requests and responses are made with the app's prototypes (server-classes.ts).
  app.listen = listenWithAppClasses(app, { clientError: answerUnparsable(deps), connect: answerConnect(deps) }) as typeof app.listen;
  app.disable('x-powered-by');
  app.set('trust proxy', opts.trustProxy);
  app.set('etag', false);

  const routes = buildRoutes(deps, opts);
  const signerRoutes = buildSignerRoutes(deps, opts);
  const logs = createLogBuffer(deps.uow, deps.logger);
  const openApi = JSON.stringify(buildOpenApi(routes, signerRoutes, opts.publicUrl));
  const auth = authenticate(deps);
  /** The tool server takes OAuth access tokens only. */
  const accessToken = authenticateAccessToken(deps);
  const admit = admitApiKey({ keyAdmission: deps.keyAdmission ?? composeKeyAdmission(deps.stores.apiKeys, deps.rateLimiter), crypto: deps.crypto });
  const keyLimits = { perKey: opts.rateLimit.perKey, perOrg: opts.rateLimit.perOrg };
  /** The window of a caller known only by its address: signing pages, OAuth endpoints, calls without a valid key. */
  const addressBucket = (req: Request) => [{ id: `ip:${req.ip ?? 'unknown'}`, limit: opts.rateLimit.perAddress ?? opts.rateLimit.perKey }];
  /**
   * Sets the rate-limit headers; answers 429 (`refuse`, problem+json unless given) and returns false when the call
   * is over its limit.
   */
  const admitted = (res: Response, decision: RateDecision, refuse = (retryAfterS: number) => sendProblem(res, { _tag: 'RateLimited', retryAfterS })): boolean => {
    res.setHeader('X-RateLimit-Limit', String(decision.limit));
    res.setHeader('X-RateLimit-Remaining', String(decision.remaining));
    res.setHeader('X-RateLimit-Reset', String(decision.resetS));
    if (decision.allowed) return true;
    res.setHeader('Retry-After', String(decision.retryAfterS));
    refuse(decision.retryAfterS);
    return false;
  };
  /** A 429 as the OAuth endpoints answer errors (RFC 6749's shape), readable by a browser-based client (CORS). */
  const oauthRateLimited = (res: Response) => (retryAfterS: number) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.setHeader('Access-Control-Expose-Headers', 'Retry-After, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset');
    res.status(429).json({ error: 'temporarily_unavailable', error_description: `Too many requests from this address; try again in ${retryAfterS} s.` });
  };
  // Behind an https public URL, browsers are told to use nothing else (RFC 6797).
  const hsts = new URL(opts.publicUrl).protocol === 'https:' ? 'max-age=31536000' : null;
  const deadline = bodyDeadline(opts.bodyTimeoutMs);
  // The OAuth endpoints answer errors as RFC 6749 has them, this one too.
  const oauthDeadline = bodyDeadline(opts.bodyTimeoutMs, (res, limitS) => {
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.status(408).json({ error: 'invalid_request', error_description: `The request body did not arrive within ${limitS} s.` });
  });

  // 1. Request id and headers every response carries.
  app.use((req, res, next) => {
    const requestId = deps.ids.next('log');
    Object.assign(res.locals, { requestId, principal: null, authError: null } satisfies Locals);
    res.setHeader('X-Request-Id', requestId);
    res.setHeader('X-Content-Type-Options', 'nosniff');
    res.setHeader('Cache-Control', 'no-store');
    if (hsts) res.setHeader('Strict-Transport-Security', hsts);
    const started = performance.now();
    res.on('finish', () => {
      const ms = Math.round((performance.now() - started) * 10) / 10;
      const p = locals(res).principal;
      // The route's pattern, and the path with every signing token redacted: a token is a credential.
      const { route, path } = loggedPath(req, res);
      deps.logger.info(
        { requestId, method: req.method, route, path, status: res.statusCode, ms, keyId: p ? keyIdOf(p.credential) : undefined, oauthClientId: p?.credential.kind === 'access_token' ? p.credential.clientId : undefined },
        'request',
      );
      const fault = faultOf(res);
      if (fault !== undefined) deps.logger.error({ requestId, method: req.method, route, path, status: res.statusCode, err: fault }, 'request failed');
      // Only calls made with a key belong to a tenant's log.
      if (p)
        logs.add({
          id: requestId,
          orgId: p.tenant.orgId,
          mode: p.tenant.mode,
          kind: 'api',
          method: req.method,
          target: path,
          status: res.statusCode,
          outcome: String(res.statusCode),
          durationMs: Math.round(ms),
          keyId: keyIdOf(p.credential),
          oauthClientId: p.credential.kind === 'access_token' ? p.credential.clientId : null,
          createdAt: deps.clock.now().toISOString(),
        });
    });
    next();
  });

  // A load balancer's probes: before any rate limit. Behind a proxy (without `trustProxy`) every keyless caller has the
  // proxy's address, the probes too, and signers' traffic used up the window the probes were counted in: a busy
  // instance answered them 429 and was taken out of service. The readiness check reads the store: shared by the probes
  // of one second, however many come, since anyone may ask for it.
  let readiness: { readonly at: number; readonly ok: Promise<boolean> } | null = null;
  const ready = (): Promise<boolean> => {
    const now = performance.now();
    if (readiness === null || now - readiness.at >= 1_000) readiness = { at: now, ok: deps.ready().catch(() => false) };
    return readiness.ok;
  };
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    const ok = await ready();
    res.status(ok ? 200 : 503).json({ status: ok ? 'ready' : 'unavailable' });
  });

  // The OAuth authorization server and the tool server: before the API's authentication and rate limits.
  const oauth = createOAuthRouter(
    { ...deps, clientMetadata: deps.clientMetadata ?? { fetch: () => async () => ({ ok: false, reason: 'client metadata documents are not enabled' }) } },
    opts.publicUrl,
  );
  // Entered only for its own paths: a mounted router costs every request that passes through it.
  const OAUTH_PATHS = /^\/(oauth|\.well-known)\//i; // Express matches paths case-insensitively
  // Counted per client address, in the window the API's keyless calls share: registration stores a client, and a
  // metadata-document client id makes the server fetch a URL, so neither may be asked for without limit.
  // A CORS preflight carries no credential and does nothing; the router answers it, uncounted. A path the router does
  // not serve goes on to the API's handling, which counts it against the same window only if this did not.
  app.use(async (req, res, next) => {
    if (!OAUTH_PATHS.test(req.path)) return next();
    if (req.method === 'OPTIONS') return oauth(req, res, next);
    const decision = await deps.rateLimiter.consume(addressBucket(req))();
    locals(res).addressDecision = decision;
    // Their bodies arrive within the read timeout, as the API's do: these endpoints need no credential.
    if (admitted(res, decision, oauthRateLimited(res))) oauthDeadline(req, res, () => oauth(req, res, next));
  });
  const uploadBytesInFlight = opts.maxUploadBytesInFlight ?? 8 * opts.maxUploadBytes;
  // A smaller budget would refuse every upload of the largest size, for good.
  if (!(uploadBytesInFlight >= opts.maxUploadBytes)) throw new Error(`maxUploadBytesInFlight (${uploadBytesInFlight}) must be at least maxUploadBytes (${opts.maxUploadBytes})`);
  const uploadBytesPerTenant = opts.maxUploadBytesInFlightPerTenant ?? Math.max(opts.maxUploadBytes, Math.floor(uploadBytesInFlight / 2));
  if (!(uploadBytesPerTenant >= opts.maxUploadBytes && uploadBytesPerTenant <= uploadBytesInFlight))
    throw new Error(`maxUploadBytesInFlightPerTenant (${uploadBytesPerTenant}) must be from maxUploadBytes (${opts.maxUploadBytes}) to maxUploadBytesInFlight (${uploadBytesInFlight})`);
  const uploads = uploadBudget({
    limitBytes: uploadBytesInFlight,
    perTenantBytes: uploadBytesPerTenant,
    maxBytes: opts.maxUploadBytes,
    // Uploads come only from callers `guard` let through.
    tenantOf: (res) => tenantKey(locals(res).principal!),
    reject: rejectEarly,
  });
  /**
   * The tool server's bodies, held whole as uploads are (its upload tool takes a PDF as base64, up to
   * `mcpMaxBodyBytes`), and not counted by the API's rate limits: a budget of their own, with the same sizes.
   */
  const mcpMaxBodyBytes = opts.mcpMaxBodyBytes ?? 40 * 1024 * 1024;
  const mcpBodies = uploadBudget({
    // One body of the largest size always fits.
    limitBytes: Math.max(uploadBytesInFlight, mcpMaxBodyBytes),
    perTenantBytes: Math.max(uploadBytesPerTenant, mcpMaxBodyBytes),
    maxBytes: mcpMaxBodyBytes,
    // Not the request's principal: the tool server's calls are not the API's, and are not logged as its calls.
    tenantOf: (res) => (res.locals as { mcpTenant: string }).mcpTenant,
    reject: rejectEarly,
  });
  /**
   * Every body is reserved from `mcpBodies` under its caller's tenant before it is read, small ones too: the tool
   * server has no rate limit, so bodies left uncounted (up to `maxJsonBytes` each) could be held as many at once as
   * a caller liked. The credential is looked up here for that (the tool server checks it again); a caller without a
   * valid one passes on unreserved, and the tool server answers it 401 without reading its body.
   */
  const mcpGate = async (req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'POST' || !hasBody(req)) return next();
    const m = /^bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    const principal = m === null ? null : await accessToken(m[1]!)();
    if (principal === null || E.isLeft(principal)) return next();
    // Over the tool server's own limit: its parser would read all of it before refusing it (as a JSON-RPC parse error).
    if (declaredOver(req, mcpMaxBodyBytes)) return rejectEarly(req, res, { _tag: 'PayloadTooLarge', limitBytes: mcpMaxBodyBytes });
    (res.locals as { mcpTenant?: string }).mcpTenant = tenantKey(principal.right);
    mcpBodies(req, res, next);
  };

  if (opts.mcp) app.all(MCP_PATH, deadline, mcpGate, opts.mcp);

  // 2. Authentication, then rate limiting by key and org (or by client address before a key is known).
  app.use(async (req, res, next) => {
    const header = req.headers.authorization;
    let decision: RateDecision | null = null;
    if (header !== undefined) {
      // The scheme is case-insensitive (RFC 9110 §11.1), one or more spaces before the credential.
      const m = /^bearer +([^\s]+)$/i.exec(header);
      if (m !== null && !m[1]!.startsWith('esig_oat_')) {
        // An API key: found and its call counted in one step (one statement where the store allows).
        const r = await admit(m[1]!, keyLimits)();
        if (E.isRight(r)) {
          locals(res).principal = r.right.principal;
          decision = r.right.decision;
        } else locals(res).authError = r.left;
      } else {
        const r = m ? await auth(m[1]!)() : E.left(malformedAuthorization());
        if (E.isRight(r)) locals(res).principal = r.right;
        else locals(res).authError = r.left;
      }
    }
    if (decision === null) {
      const p = locals(res).principal;
      decision = p ? await deps.rateLimiter.consume(principalBuckets(p, keyLimits))() : (locals(res).addressDecision ?? (await deps.rateLimiter.consume(addressBucket(req))()));
    }
    if (admitted(res, decision)) next();
  });

  app.get('/api/v1/openapi.json', (_req, res) => void res.type('application/json').send(openApi));
  app.use(SIGNING_BASE, createSignerRouter(signerRoutes, deadline, deps));

  const jsonParser = express.json({ limit: opts.maxJsonBytes, strict: true, type: () => true });
  const rawPdf = express.raw({ limit: opts.maxUploadBytes, type: () => true });
  const multer1 = multer({ storage: multer.memoryStorage(), limits: { fileSize: opts.maxUploadBytes, files: 1, fields: 5 } }).single('file');
  // Any other fault of the multipart parser (no boundary, a truncated or garbled body) is the client's.
  const multipart = (req: Request, res: Response, next: NextFunction) =>
    multer1(req, res, (err?: unknown) => {
      if (err === undefined || err === null) return next();
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && code.startsWith('LIMIT_')) return next(err);
      sendProblem(res, validationFailed([{ path: '(body)', message: 'is not a readable multipart/form-data body' }], 'The body is not a readable multipart/form-data body.'));
    });

  /**
   * Authentication and the route's scope, decided from the headers alone: nothing of the body is read (or
   * replayed from an idempotency record) for a caller who may not make this call.
   */
  const guard = (route: Route) => (req: Request, res: Response, next: NextFunction) => {
    setRoutePattern(res, route.path);
    const { principal, authError } = locals(res);
    if (principal === null) return rejectEarly(req, res, authError ?? { _tag: 'Unauthenticated', detail: 'Send Authorization: Bearer <API key>.' });
    if (!hasScope(principal.scopes, route.scope)) return rejectEarly(req, res, insufficientScope(route.scope));
    next();
  };

  for (const route of routes) {
    const bodyParsers =
      route.method === 'get'
        ? []
        : route.body === 'pdf'
          ? [
              deadline,
              (req: Request, res: Response, next: NextFunction) => {
                // No body at all (`req.is` is then null whatever the type): the handler says the file is missing.
                if (!hasBody(req)) return next();
                if (req.is('application/pdf')) {
                  // Refused from its headers, before any of it is sent (a multipart body may be longer than its file).
                  if (declaredOver(req, opts.maxUploadBytes)) return rejectEarly(req, res, { _tag: 'PayloadTooLarge', limitBytes: opts.maxUploadBytes });
                  return uploads(req, res, () => rawPdf(req, res, next));
                }
                if (req.is('multipart/form-data')) return uploads(req, res, () => multipart(req, res, next));
                rejectEarly(req, res, { _tag: 'UnsupportedMediaType', expected: 'application/pdf or multipart/form-data' });
              },
            ]
          : [
              deadline,
              (req: Request, res: Response, next: NextFunction) => {
                if (!hasBody(req)) return next();
                if (!req.is('application/json')) return rejectEarly(req, res, { _tag: 'UnsupportedMediaType', expected: 'application/json' });
                if (declaredOver(req, opts.maxJsonBytes)) return rejectEarly(req, res, { _tag: 'PayloadTooLarge', limitBytes: opts.maxJsonBytes });
                jsonParser(req, res, next);
              },
            ];
    app[route.method](toExpressPath(route.path), guard(route), ...bodyParsers, (req: Request, res: Response) => handle(route, req, res));
  }

  const handle = async (route: Route, req: Request, res: Response) => {
    // `guard` let only an authenticated caller with the route's scope this far.
    const principal = locals(res).principal!;

    const decoded = pipe(
      E.Do,
      E.apS('params', route.params ? decodeEach(route.params, req.params as Record<string, string>) : E.right({})),
      E.apS('query', route.query ? decode(route.query, { ...req.query }) : E.right(undefined)),
      E.apS('body', route.body && route.body !== 'pdf' ? decode(route.body, req.body === undefined && route.emptyBodyAllowed ? {} : req.body) : E.right(undefined)),
    );
    if (E.isLeft(decoded)) return sendProblem(res, decoded.left);
    const upload = uploadOf(req);
    if (upload !== null && upload.name !== undefined) {
      // A multipart upload's text fields are input like any other.
      const form = decode(UploadForm, { name: upload.name });
      if (E.isLeft(form)) return sendProblem(res, form.left);
    }
    const ctx = { principal, ...decoded.right, upload, accept: req.get('accept') };

    if (route.kind === 'read') return respond(res, route.handle(ctx), (reply) => sendReply(res, reply));

    const key = idempotencyKeyOf(req);
    if (E.isLeft(key)) return sendProblem(res, key.left);
    const caller = { tenant: principal.tenant, credential: credentialId(principal.credential), requestId: locals(res).requestId };
    const sealResponse = route.replayInClear !== true;
    if (key.right !== undefined && route.lookUpKeyFirst === true && (await answeredFromKey(deps, req, res, { key: key.right, caller, sealResponse }))) return;
    return respond(res, route.handle(ctx), (w: WriteOp<unknown>) => runWrite(deps, req, res, { key: key.right, caller, sealResponse }, w));
  };

  mountSigningPage(app);
  mountEmbedPage(app, deps);

  app.use((_req, res) => sendProblem(res, { _tag: 'RouteNotFound' }));

  // Faults from body parsers carry a `type`/`code`; anything else is a bug, logged and answered as 500.
  app.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // The body stopped arriving after a rejection was answered (a read timeout): nothing more to say.
    if (res.headersSent) return res.end();
    const e = err as { type?: string; code?: string; status?: number };
    if (e.type === 'entity.too.large' || e.code === 'LIMIT_FILE_SIZE')
      return sendProblem(res, { _tag: 'PayloadTooLarge', limitBytes: req.is('application/json') ? opts.maxJsonBytes : opts.maxUploadBytes });
    if (e.type === 'entity.parse.failed')
      // The strict parser refuses JSON that is not an object or array (`null`, `5`) as it refuses broken JSON.
      return sendProblem(
        res,
        isJson((err as { body?: unknown }).body)
          ? validationFailed([{ path: '(body)', message: 'must be a JSON object' }], 'The body must be a JSON object.')
          : validationFailed([{ path: '(body)', message: 'is not valid JSON' }], 'The body is not valid JSON.'),
      );
    if (e.type === 'encoding.unsupported' || e.type === 'charset.unsupported') return sendProblem(res, { _tag: 'UnsupportedMediaType', expected: 'UTF-8 JSON' });
    if (typeof e.code === 'string' && e.code.startsWith('LIMIT_')) return sendProblem(res, validationFailed([{ path: '(body)', message: `multipart: ${e.code}` }]));
    // The router decodes path parameters before any handler runs, and fails a malformed escape (`%E0%A4%A`) so.
    if (err instanceof URIError && e.status === 400)
      return sendProblem(res, validationFailed([{ path: '(path)', message: 'is not valid percent-encoding' }], 'The URL path is not valid percent-encoding.'));
    if (e.status !== undefined && e.status >= 400 && e.status < 500) return sendProblem(res, validationFailed([{ path: '(body)', message: 'could not be read' }]));
    deps.logger.error({ requestId: locals(res).requestId, err: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) }, 'unhandled error');
    if (res.headersSent) return res.end();
    sendProblem(res, { _tag: 'Internal' });
  });

  return { app, close: () => logs.flush(true) };
};

/** Answers on a bare socket, where no response object exists, as the API answers everything, and closes it. */
const answerOnSocket = (deps: Pick<EsigHttpDeps, 'ids' | 'logger'>, socket: Duplex, problem: ApiError, logged: Record<string, unknown>, msg: string) => {
  const requestId = deps.ids.next('log');
  const body = JSON.stringify(toProblem(problem, requestId));
  const status = statusOf(problem);
  socket.end(
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `X-Request-Id: ${requestId}\r\nX-Content-Type-Options: nosniff\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n${body}`,
  );
  deps.logger.info({ requestId, status, ...logged }, msg);
};

/**
 * Answers a request Node's HTTP parser refused before any handler ran (an unknown method, a request line or
 * headers past the limit, a malformed header or length), as the API answers everything: problem+json with a
 * request id, and the connection closed. Node's own answer is a bare status line.
 */
const answerUnparsable =
  (deps: Pick<EsigHttpDeps, 'ids' | 'logger'>) =>
  (err: Error & { code?: string }, socket: Duplex): void => {
    if (err.code === 'ECONNRESET' || !socket.writable) return void socket.destroy();
    const problem: ApiError =
      err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? { _tag: 'RequestTimeout', limitS: 300 }
        : err.code === 'HPE_HEADER_OVERFLOW'
          ? validationFailed([{ path: '(request)', message: 'has a request line or headers over the size limit' }], 'The request line or headers are too large.')
          : validationFailed([{ path: '(request)', message: 'is not valid HTTP/1.1' }], 'The request is not valid HTTP/1.1.');
    answerOnSocket(deps, socket, problem, { parserError: err.code }, 'request refused by the HTTP parser');
  };

/** Answers a `CONNECT` (esig is no proxy), which Node would otherwise close without a word. */
const answerConnect =
  (deps: Pick<EsigHttpDeps, 'ids' | 'logger'>) =>
  (_req: http.IncomingMessage, socket: Duplex): void => {
    if (!socket.writable) return void socket.destroy();
    const problem = validationFailed([{ path: '(method)', message: 'CONNECT is not supported' }], 'The CONNECT method is not supported.');
    answerOnSocket(deps, socket, problem, { method: 'CONNECT' }, 'request refused: CONNECT');
  };

const malformedAuthorization = (): DomainError => ({ _tag: 'Unauthenticated', detail: 'Use Authorization: Bearer <API key>.' });

const uploadOf = (req: Request): Upload | null => {
  const file = (req as Request & { file?: { buffer: Buffer } }).file;
  if (file) {
    const name = (req.body as Record<string, unknown> | undefined)?.name;
    return { bytes: new Uint8Array(file.buffer.buffer, file.buffer.byteOffset, file.buffer.byteLength), name: typeof name === 'string' ? name : undefined };
  }
  if (Buffer.isBuffer(req.body) && req.body.length > 0) return { bytes: new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.byteLength), name: undefined };
  return null;
};
