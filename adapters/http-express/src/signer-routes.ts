import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { ClientInfo, DomainError, SignerView } from '@esig/core';
import {
  authenticateSigner,
  authenticateSignerCommand,
  declineAsRecipient,
  declineAsRecipientCommand,
  getSigningDocument,
  getSigningFinishedDocument,
  openSigningLink,
  requestSignerOtp,
  signAsRecipient,
  signAsRecipientCommand,
  signingLinkCredential,
  viewAgreement,
  viewAgreementCommand,
} from '@esig/core';
import * as c from './codecs.js';
import type { OtpSentResource, SignerViewResource } from './codecs.js';
import { decode, decodeEach } from './decode.js';
import type { EsigHttpDeps, EsigHttpOptions } from './deps.js';
import { presentField } from './presenters.js';
import type { AnySignerRoute, WriteOp } from './route.js';
import { SIGNING_BASE, SIGNING_PATH, json, op, pdf, signer, toExpressPath } from './route.js';
import { setRoutePattern } from './log-path.js';
import { rejectEarly, sendProblem, sendReply } from './send.js';
import { idempotencyKeyOf, runWrite } from './write-pipeline.js';
import { declaredOver } from './body-length.js';

/** The signer's view as JSON (docs/signer-api.md): only what this recipient may see. */
export const presentSignerView = (v: SignerView): SignerViewResource => ({
  request: {
    id: v.request.id,
    title: v.request.title,
    message: v.request.message,
    status: v.request.status,
    testMode: v.request.mode === 'test',
    signingOrder: v.request.signingOrder,
    expiresAt: v.request.expiresAt,
  },
  recipient: {
    id: v.recipient.id,
    firstName: v.recipient.firstName,
    lastName: v.recipient.lastName,
    email: v.email,
    role: v.recipient.role,
    status: v.recipient.status,
    authentication: v.recipient.authentication,
    authenticated: v.authenticated,
    locked: v.locked,
    yourTurn: v.yourTurn,
  },
  documents: v.documents.map((d) => ({ id: d.id, name: d.name, pageCount: d.pageCount })),
  fields: v.fields.map(presentField),
  everyoneSigned: v.everyoneSigned,
  finishedDocumentAvailable: v.finishedDocumentAvailable,
});

const view = TE.map((v: SignerView) => json(200)(presentSignerView(v)));
/** A signer write's command, answered with the signer's view as `view` answers it. */
const viewOp = (command: WriteOp<SignerView>['command']): WriteOp<SignerView> => op(command, 200, presentSignerView);
const sameAsGet = 'The signer’s view, as `GET` answers it.';

/**
 * The signer API, in one table like the public API's: the Express handlers and the OpenAPI document are both
 * generated from it. Authenticated by the link's token alone, no API key; every call records time, IP
 * address and user agent in the request's evidence trail.
 */
export const buildSignerRoutes = (deps: EsigHttpDeps, opts: EsigHttpOptions): readonly AnySignerRoute[] => [
  signer({
    method: 'get', path: SIGNING_PATH, operationId: 'openSigningLink',
    summary: 'Resolve the link: the request, this recipient, their documents and fields. The first call records that the link was opened.',
    response: { status: 200, codec: c.SignerViewResource, description: 'The signer’s view; `documents` and `fields` are empty until identification is passed.' },
    handle: ({ token, client }) => pipe(openSigningLink(deps)(token, client), view),
  }),
  signer({
    method: 'get', path: `${SIGNING_PATH}/documents/{documentId}`, operationId: 'getSigningDocument',
    summary: 'One of the request’s documents as uploaded. 409 before identification.', params: { documentId: c.SigningDocumentId },
    response: { status: 200, contentType: 'application/pdf', description: 'The original PDF.' },
    handle: ({ token, params }) => pipe(getSigningDocument(deps)(token, params.documentId), TE.map((d) => pdf(d.bytes, d.name))),
  }),
  signer({
    method: 'get', path: `${SIGNING_PATH}/document`, operationId: 'getSigningFinishedDocument',
    summary: 'The finished PDF once the request is COMPLETED (`finishedDocumentAvailable`); 409 before.',
    response: { status: 200, contentType: 'application/pdf', description: 'The finished PDF.' },
    handle: ({ token }) => pipe(getSigningFinishedDocument(deps)(token), TE.map((d) => pdf(d.bytes, d.name))),
  }),
  signer({
    method: 'post', path: `${SIGNING_PATH}/view`, operationId: 'viewAgreement',
    summary: 'Record that the agreement itself was displayed.', body: c.EmptyBody,
    response: { status: 200, codec: c.SignerViewResource, description: sameAsGet },
    handle: ({ token, client }) => pipe(viewAgreement(deps)(token, client), view),
    write: ({ token, client }) => TE.right(viewOp(viewAgreementCommand(deps)(token, client))),
  }),
  signer({
    method: 'post', path: `${SIGNING_PATH}/sign`, operationId: 'signAgreement',
    summary: 'Sign: this recipient’s field values and the adopted signature (typed name, or a drawn PNG data URL).', body: c.SignBody,
    response: { status: 200, codec: c.SignerViewResource, description: sameAsGet },
    handle: ({ token, body, client }) => pipe(signAsRecipient(deps)(token, body, client), view),
    write: ({ token, body, client }) => pipe(signAsRecipientCommand(deps)(token, body, client), TE.map(viewOp)),
  }),
  signer({
    method: 'post', path: `${SIGNING_PATH}/decline`, operationId: 'declineAgreement',
    summary: 'Decline, with a reason; the request becomes DECLINED.', body: c.DeclineBody,
    response: { status: 200, codec: c.SignerViewResource, description: sameAsGet },
    handle: ({ token, body, client }) => pipe(declineAsRecipient(deps)(token, body.reason, client), view),
    write: ({ token, body, client }) => TE.right(viewOp(declineAsRecipientCommand(deps)(token, body.reason, client))),
  }),
  signer({
    method: 'post', path: `${SIGNING_PATH}/otp`, operationId: 'requestSignerOtp',
    summary: 'Mail a 6-digit code, valid for 10 minutes, to an `email_otp` recipient.', body: c.EmptyBody,
    response: { status: 202, codec: c.OtpSentResource, description: 'The code is on its way, to the masked address shown.' },
    errors: { mail_unavailable: 'the code could not be mailed; ask again' },
    handle: ({ token, client }) =>
      pipe(requestSignerOtp({ ...deps, publicUrl: opts.publicUrl })(token, client), TE.map((r): OtpSentResource => r), TE.map(json(202))),
  }),
  signer({
    method: 'post', path: `${SIGNING_PATH}/authenticate`, operationId: 'authenticateSigner',
    summary: 'Pass identification with the mailed code or the sender-set access code; 5 failures lock it.', body: c.AuthenticateBody,
    response: { status: 200, codec: c.SignerViewResource, description: sameAsGet },
    handle: ({ token, body, client }) => pipe(authenticateSigner(deps)(token, body.code, client), view),
    write: ({ token, body, client }) =>
      TE.right({
        command: authenticateSignerCommand(deps)(token, body.code, client),
        status: 200,
        present: (r: E.Either<unknown, SignerView>) => (E.isRight(r) ? presentSignerView(r.right) : null),
        // A wrong code is counted, committed, and answered as the refusal it is.
        refused: (r: E.Either<DomainError, SignerView>) => (E.isLeft(r) ? r.left : null),
      }),
  }),
];

const clientOf = (req: Request): ClientInfo => ({ ip: req.ip ?? null, userAgent: req.get('user-agent')?.slice(0, 512) ?? null });

/**
 * The signer routes as Express handlers, to mount at `SIGNING_BASE`. An ill-formed token is an unknown link
 * (`404`), never a validation error, answered before any body is read; routes with a body take JSON (a
 * missing body counts as `{}`), within `deadline`. A write with an `Idempotency-Key` (see `SignerRoute.write`) runs
 * under the key's record once the link is known: an unknown link is `404` before any record is looked up.
 */
/** The largest body of a signer call: a drawn signature is at most a 200 kB data URL. */
const SIGNER_JSON_LIMIT = 512 * 1024;

export const createSignerRouter = (routes: readonly AnySignerRoute[], deadline: RequestHandler, deps: EsigHttpDeps): express.Router => {
  const router = express.Router();
  const jsonParser = express.json({ limit: SIGNER_JSON_LIMIT, strict: true, type: () => true });

  const precheck = (route: AnySignerRoute) => (req: Request, res: Response, next: NextFunction) => {
    setRoutePattern(res, route.path);
    const token = decode(c.SigningToken, req.params.token, 'token');
    if (E.isLeft(token)) return sendProblem(res, { _tag: 'NotFound', resource: 'signing_link', id: 'given' });
    if (route.body !== undefined && req.headers['content-type'] !== undefined && !req.is('application/json'))
      return sendProblem(res, { _tag: 'UnsupportedMediaType', expected: 'application/json' });
    if (route.body !== undefined && declaredOver(req, SIGNER_JSON_LIMIT)) return rejectEarly(req, res, { _tag: 'PayloadTooLarge', limitBytes: SIGNER_JSON_LIMIT });
    next();
  };

  const handle = (route: AnySignerRoute) => async (req: Request, res: Response) => {
    const token = decode(c.SigningToken, req.params.token, 'token');
    if (E.isLeft(token)) return sendProblem(res, { _tag: 'NotFound', resource: 'signing_link', id: 'given' });
    const decoded = pipe(
      E.Do,
      E.apS('params', decodeEach(route.params ?? {}, req.params as Record<string, string>)),
      E.apS('body', route.body === undefined ? E.right(undefined) : decode(route.body, req.body ?? {})),
    );
    if (E.isLeft(decoded)) return sendProblem(res, decoded.left);
    const ctx = { token: token.right, ...decoded.right, client: clientOf(req) };
    if (route.write !== undefined && req.header('Idempotency-Key') !== undefined) {
      // The link first: an unknown one is 404 whatever the key, and no record is looked up for it.
      const caller = await signingLinkCredential(deps)(token.right)();
      if (E.isLeft(caller)) return sendProblem(res, caller.left);
      const key = idempotencyKeyOf(req);
      if (E.isLeft(key)) return sendProblem(res, key.left);
      const w = await route.write(ctx)();
      if (E.isLeft(w)) return sendProblem(res, w.left);
      const requestId = String(res.locals.requestId);
      const { tenant, credential } = caller.right;
      return runWrite(deps, req, res, { key: key.right, caller: { tenant, credential, requestId, keySpace: `${credential}:` }, sealResponse: true }, w.right);
    }
    const r = await route.handle(ctx)();
    if (E.isLeft(r)) return sendProblem(res, r.left);
    sendReply(res, r.right);
  };

  for (const route of routes) {
    const parsers: RequestHandler[] = route.body === undefined ? [] : [deadline, jsonParser];
    if (!route.path.startsWith(`${SIGNING_BASE}/`)) throw new Error(`Signer route ${route.path} is not under ${SIGNING_BASE}`);
    router[route.method](toExpressPath(route.path.slice(SIGNING_BASE.length)), precheck(route), ...parsers, handle(route));
  }
  return router;
};
