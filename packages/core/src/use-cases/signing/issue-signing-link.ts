import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState, notFound } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import type { Command } from '../command.js';
import { loadRequest, requireScope } from '../policy.js';

/** A signing link, minted: its token is in clear here only (the store keeps its hash). */
export interface IssuedSigningLink {
  readonly token: string;
  readonly requestId: string;
  readonly recipientId: string;
  readonly createdAt: string;
}

/** Stores the hash of a fresh 256-bit token for one recipient and returns the token. */
export const insertSigningLink = (
  tx: Stores,
  deps: { readonly clock: Clock; readonly crypto: Crypto },
  link: { readonly orgId: string; readonly mode: Principal['tenant']['mode']; readonly requestId: string; readonly recipientId: string },
  /** How long the link works; without it, until the request ends. */
  ttlMs: number | null = null,
): TE.TaskEither<DomainError, IssuedSigningLink> => {
  const token = deps.crypto.randomAlphanumeric(43);
  const now = deps.clock.now();
  const createdAt = now.toISOString();
  const expiresAt = ttlMs === null ? null : new Date(now.getTime() + ttlMs).toISOString();
  return pipe(
    tx.signingLinks.insert({ tokenHash: deps.crypto.sha256Hex(token), ...link, createdAt, expiresAt }),
    TE.map(() => ({ token, requestId: link.requestId, recipientId: link.recipientId, createdAt })),
  );
};

/**
 * Issues a signing link for a signer of a sent request and returns its token, without any mail: for a
 * backend that shows the signing step in its own product (pass the token to the signer use cases:
 * `openSigningLink`, `signAsRecipient`, …) or mails it itself. Each call issues a new link; earlier links of
 * the recipient stay valid until the request ends. Needs `signature_requests:write`.
 *
 * @example
 * const link = await execute(deps)(issueSigningLink(deps)(me, request.id, ada.id))();
 * // E.isRight(link): show `${yourSigningPage}?token=${link.right.token}` to Ada, signed in to your product.
 */
export const issueSigningLink =
  (deps: { readonly clock: Clock; readonly crypto: Crypto }) =>
  (p: Principal, requestId: string, recipientId: string): Command<IssuedSigningLink> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId, false)),
      TE.chainW((r) => {
        const recipient = r.recipients.find((x) => x.id === recipientId);
        if (recipient === undefined) return TE.left(notFound('recipient', recipientId));
        if (r.status !== 'SENT') return TE.left(invalidState(`The request is ${r.status}; links are issued while it is SENT.`));
        if (recipient.role !== 'signer') return TE.left(invalidState('A cc recipient does not sign.'));
        if (recipient.status === 'SIGNED' || recipient.status === 'DECLINED') return TE.left(invalidState(`The recipient has ${recipient.status.toLowerCase()}.`));
        return insertSigningLink(tx, deps, { orgId: r.orgId, mode: r.mode, requestId: r.id, recipientId: recipient.id });
      }),
    );
