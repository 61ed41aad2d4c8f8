import * as E from 'fp-ts/Either';
import type * as TE from 'fp-ts/TaskEither';
import express from 'express';
import type { Request, Response } from 'express';
import type { ClientInfo, DomainError, SignerView } from '@esig/core';
import { authenticateSigner, declineAsRecipient, getSigningDocument, getSigningFinishedDocument, openSigningLink, requestSignerOtp, signAsRecipient, viewAgreement } from '@esig/core';
import type * as t from 'io-ts';
import * as c from './codecs';
import { decode } from './decode';
import type { EsigHttpDeps, EsigHttpOptions } from './deps';
import type { ApiError } from './problem';
import { statusOf, toProblem } from './problem';
import { presentField } from './presenters';

/** The signer's view as JSON (docs/signer-api.md): only what this recipient may see. */
export const presentSignerView = (v: SignerView) => ({
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
    email: v.recipient.email,
    role: v.recipient.role,
    status: v.recipient.status,
    authentication: v.recipient.authentication,
    authenticated: v.authenticated,
    locked: v.locked,
    yourTurn: v.yourTurn,
  },
  documents: v.documents.map((d) => ({ id: d.id, name: d.name, pageCount: d.pageCount })),
  fields: v.fields.map(presentField),
  finishedDocumentAvailable: v.finishedDocumentAvailable,
});

const clientOf = (req: Request): ClientInfo => ({ ip: req.ip ?? null, userAgent: req.get('user-agent')?.slice(0, 512) ?? null });

/**
 * The signer API under `/api/v1/signing/{token}`: authenticated by the link's token alone, no API key.
 * Every call records time, IP address and user agent in the request's evidence trail.
 */
export const createSignerRouter = (deps: EsigHttpDeps, opts: EsigHttpOptions): express.Router => {
  const router = express.Router({ mergeParams: true });
  const json = express.json({ limit: 512 * 1024, strict: true, type: () => true });

  const problem = (res: Response, e: ApiError) =>
    void res.status(statusOf(e)).type('application/problem+json').send(JSON.stringify(toProblem(e, String(res.locals.requestId))));

  /** Decodes the token (and a body), runs the action, answers JSON or a problem. */
  const action =
    <B>(body: t.Type<B, unknown, unknown> | null, run: (token: string, body: B, client: ClientInfo) => TE.TaskEither<DomainError, unknown>, status = 200) =>
    async (req: Request, res: Response) => {
      const token = decode(c.SigningToken, req.params.token, 'token');
      if (E.isLeft(token)) return problem(res, { _tag: 'NotFound', resource: 'signing_link', id: 'given' });
      if (body !== null && req.headers['content-type'] !== undefined && !req.is('application/json'))
        return problem(res, { _tag: 'UnsupportedMediaType', expected: 'application/json' });
      const decoded = body === null ? E.right(undefined as B) : decode(body, req.body ?? {});
      if (E.isLeft(decoded)) return problem(res, decoded.left);
      const r = await run(token.right, decoded.right, clientOf(req))();
      if (E.isLeft(r)) return problem(res, r.left);
      res.status(status).json(r.right);
    };

  const view = (te: TE.TaskEither<DomainError, SignerView>) => async () => E.map(presentSignerView)(await te());

  const pdf = (get: (token: string, req: Request) => TE.TaskEither<DomainError, { name: string; bytes: Uint8Array }>) => async (req: Request, res: Response) => {
    const token = decode(c.SigningToken, req.params.token, 'token');
    if (E.isLeft(token)) return problem(res, { _tag: 'NotFound', resource: 'signing_link', id: 'given' });
    const r = await get(token.right, req)();
    if (E.isLeft(r)) return problem(res, r.left);
    res.status(200).type('application/pdf');
    res.setHeader('Content-Disposition', `inline; filename="${r.right.name.replace(/[^\x20-\x7e]|"/g, '_')}"`);
    res.end(Buffer.from(r.right.bytes.buffer, r.right.bytes.byteOffset, r.right.bytes.byteLength));
  };

  router.get('/:token', action(null, (token, _b, client) => view(openSigningLink(deps)(token, client))));
  router.get('/:token/documents/:documentId', pdf((token, req) => getSigningDocument(deps)(token, String(req.params.documentId))));
  router.get('/:token/document', pdf((token) => getSigningFinishedDocument(deps)(token)));
  router.post('/:token/view', json, action(c.EmptyBody, (token, _b, client) => view(viewAgreement(deps)(token, client))));
  router.post('/:token/sign', json, action(c.SignBody, (token, body, client) => view(signAsRecipient(deps)(token, body, client))));
  router.post('/:token/decline', json, action(c.DeclineBody, (token, body, client) => view(declineAsRecipient(deps)(token, body.reason, client))));
  router.post('/:token/otp', json, action(c.EmptyBody, (token, _b, client) => requestSignerOtp({ ...deps, publicUrl: opts.publicUrl })(token, client), 202));
  router.post('/:token/authenticate', json, action(c.AuthenticateBody, (token, body, client) => view(authenticateSigner(deps)(token, body.code, client))));
  return router;
};
