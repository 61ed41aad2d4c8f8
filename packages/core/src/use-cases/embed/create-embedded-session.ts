import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState, notFound } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { EmbedSession } from '../../ports/embed-session-store.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import { signersDue } from '../../state-machine.js';
import type { Command } from '../command.js';
import { check, loadRequest, requireScope } from '../policy.js';
import { embedOriginProblem } from './embed-origin.js';

/** Default lifetime of an unused embedded session (CONTRACT: 5 min, `ESIG_EMBED_SESSION_TTL_S`). */
export const DEFAULT_EMBED_SESSION_TTL_S = 300;

/** A session just created: its token is in clear here only (the store keeps its hash). */
export interface CreatedEmbedSession {
  readonly session: EmbedSession;
  readonly token: string;
}

export interface EmbedSessionDeps {
  readonly clock: Clock;
  readonly crypto: Crypto;
  readonly ids: IdGenerator;
  /** Lifetime of an unused session, in seconds. */
  readonly embedSessionTtlS: number;
}

/**
 * Creates a one-time session for signing inside the caller's own web page: a token (≈ 256 random bits)
 * bound to one signer of a sent request and to the one browser `origin` allowed to frame the signing page.
 * The signer must be able to sign now (not signed or declined, not `cc`, their turn); a request of another
 * org or mode is not found. The first load of the page consumes the session; unused, it expires after
 * `embedSessionTtlS`. Needs `signature_requests:write`.
 *
 * @example
 * const s = await execute(deps)(createEmbeddedSession({ ...deps, embedSessionTtlS: 300 })(me, request.id, ada.id, { origin: 'https://app.example.com' }))();
 * // E.isRight(s): frame `${publicUrl}/embed/${s.right.token}` in a page of https://app.example.com.
 */
export const createEmbeddedSession =
  (deps: EmbedSessionDeps) =>
  (p: Principal, requestId: string, recipientId: string, body: { readonly origin: string }): Command<CreatedEmbedSession> =>
  (tx) =>
    pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => {
        const problem = embedOriginProblem(body.origin, p.tenant.mode);
        return check([problem === null ? null : { path: 'origin', message: problem }]);
      }),
      TE.chainW(() => loadRequest(tx, p, requestId, false)),
      TE.chainW((r): TE.TaskEither<DomainError, CreatedEmbedSession> => {
        const recipient = r.recipients.find((x) => x.id === recipientId);
        if (recipient === undefined) return TE.left(notFound('recipient', recipientId));
        if (r.status !== 'SENT') return TE.left(invalidState(`The request is ${r.status}; embedded sessions are created while it is SENT.`));
        if (recipient.role !== 'signer') return TE.left(invalidState('A cc recipient does not sign.'));
        if (recipient.status === 'SIGNED' || recipient.status === 'DECLINED') return TE.left(invalidState(`The recipient has ${recipient.status.toLowerCase()}.`));
        if (!signersDue(r).some((s) => s.id === recipient.id)) return TE.left(invalidState('It is not this signer’s turn yet: an earlier signer in the order has not signed.'));
        const token = deps.crypto.randomAlphanumeric(43);
        const now = deps.clock.now();
        const session: EmbedSession = {
          id: deps.ids.next('ses'),
          tokenHash: deps.crypto.sha256Hex(token),
          orgId: r.orgId,
          mode: r.mode,
          requestId: r.id,
          recipientId: recipient.id,
          origin: body.origin,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + deps.embedSessionTtlS * 1000).toISOString(),
          usedAt: null,
        };
        return pipe(
          tx.embedSessions.insert(session),
          TE.map(() => ({ session, token })),
        );
      }),
    );
