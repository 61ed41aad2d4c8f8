import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { notFound } from '../../errors.js';
import type { Document } from '../../model/document.js';
import type { Field, Recipient, SignatureRequest } from '../../model/signature-request.js';
import { MAX_AUTH_ATTEMPTS, isTerminal } from '../../model/signature-request.js';
import type { Tenant } from '../../model/tenant.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { SigningLink } from '../../ports/signing-link-store.js';
import type { Stores } from '../../ports/stores.js';
import { allSignersSigned, awaitingSeal, signersDue } from '../../state-machine.js';

/**
 * What one signer may see of a request through their link. Never other recipients' names or addresses;
 * before identification not even this recipient's full address; after the request ended only its final
 * state (and, once sealed, the finished document).
 */
export interface SignerView {
  readonly request: SignatureRequest;
  readonly recipient: Recipient;
  /** The recipient's address as the signer may see it: masked (`a…@example.com`) until identification. */
  readonly email: string;
  /** Empty until identification is passed, and once the request has ended. */
  readonly documents: readonly Document[];
  /** This recipient's own fields; empty until identification is passed, and once the request has ended. */
  readonly fields: readonly Field[];
  readonly authenticated: boolean;
  readonly locked: boolean;
  /** Whether this recipient may sign now: the request is open and no earlier signer is still awaited. */
  readonly yourTurn: boolean;
  /**
   * Every signer has signed: true while the finished document is being produced (the request is still SENT)
   * and once it is COMPLETED.
   */
  readonly everyoneSigned: boolean;
  readonly finishedDocumentAvailable: boolean;
}

export interface SigningContext {
  readonly link: SigningLink;
  readonly tenant: Tenant;
  readonly request: SignatureRequest;
  readonly recipient: Recipient;
}

/** A link token: at least 43 alphanumerics (≈ 256 bits); anything else cannot be one of ours. */
export const SIGNING_TOKEN_PATTERN: RegExp = /^[A-Za-z0-9]{43,128}$/;

const unknownLink = () => notFound('signing_link', 'given');

/** The live link a token names, through `stores`: an ill-formed, unknown or expired token is `NotFound`. */
export const findLiveLink = (stores: Stores, deps: { readonly crypto: Crypto; readonly clock: Clock }, token: string): TE.TaskEither<DomainError, SigningLink> =>
  !SIGNING_TOKEN_PATTERN.test(token)
    ? TE.left(unknownLink())
    : pipe(
        stores.signingLinks.findByTokenHash(deps.crypto.sha256Hex(token)),
        // A link past its own lifetime (an embedded session's credential) is as good as none.
        TE.chainW((link) => (link === null || (link.expiresAt !== null && link.expiresAt <= deps.clock.now().toISOString()) ? TE.left(unknownLink()) : TE.right(link))),
      );

/**
 * Resolves a link token (the credential) to its request and recipient, through `stores`; `forChange`
 * (inside a transaction that will change the request) takes the request's row lock.
 */
export const loadSigningContext = (
  stores: Stores,
  deps: { readonly crypto: Crypto; readonly clock: Clock },
  token: string,
  forChange = false,
): TE.TaskEither<DomainError, SigningContext> =>
  pipe(
    findLiveLink(stores, deps, token),
    TE.chainW((link) => {
      const tenant: Tenant = { orgId: link.orgId, mode: link.mode };
      return pipe(
        forChange ? stores.signatureRequests.findByIdForUpdate(tenant, link.requestId) : stores.signatureRequests.findById(tenant, link.requestId),
        TE.chainW((request) => {
          const recipient = request?.recipients.find((r) => r.id === link.recipientId);
          return request == null || recipient === undefined ? TE.left(unknownLink()) : TE.right({ link, tenant, request, recipient });
        }),
      );
    }),
  );

export const isIdentified = (r: Recipient): boolean => r.authentication === 'none' || r.authenticatedAt !== null;

/**
 * Whether the link may still show the agreement itself (documents, fields): only while the request is open.
 * Once every signer has signed (the finished document is being produced) or it ended (completed, declined,
 * expired, cancelled) a link shows its final state only.
 */
export const mayShowAgreement = (request: SignatureRequest, recipient: Recipient): boolean =>
  isIdentified(recipient) && !isTerminal(request.status) && !awaitingSeal(request);

/** `a…@example.com`: enough for a person to recognise their address, not enough to harvest it. */
export const maskEmail = (email: string): string => {
  const at = email.lastIndexOf('@');
  return at < 0 ? '…' : `${Array.from(email.slice(0, at))[0] ?? ''}…${email.slice(at)}`;
};

/** Builds the signer's view; documents are loaded only while `mayShowAgreement`. */
export const buildSignerView = (stores: Stores, ctx: SigningContext): TE.TaskEither<DomainError, SignerView> => {
  const { request, recipient } = ctx;
  const identified = isIdentified(recipient);
  const show = mayShowAgreement(request, recipient);
  return pipe(
    show ? stores.documents.findByIds(ctx.tenant, request.documentIds) : TE.right([] as readonly Document[]),
    TE.map((docs) => ({
      request,
      recipient,
      email: identified ? recipient.email : maskEmail(recipient.email),
      documents: request.documentIds.map((id) => docs.find((d) => d.id === id)).filter((d): d is Document => d !== undefined),
      fields: show ? request.fields.filter((f) => f.recipientId === recipient.id) : [],
      authenticated: identified,
      locked: recipient.authFailures >= MAX_AUTH_ATTEMPTS,
      // signersDue reads the recipients only; an ended request has no turns left.
      yourTurn: request.status === 'SENT' && signersDue(request).some((s) => s.id === recipient.id),
      everyoneSigned: request.status === 'COMPLETED' || (request.status === 'SENT' && allSignersSigned(request)),
      finishedDocumentAvailable: request.status === 'COMPLETED' && request.finishedSha256 !== null,
    })),
  );
};
