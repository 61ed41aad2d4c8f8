import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { notFound } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { EmbedSession } from '../../ports/embed-session-store.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import { insertSigningLink } from '../signing/issue-signing-link.js';
import { SIGNING_TOKEN_PATTERN } from '../signing/signing-session.js';

/**
 * What loading an embedded session's page found: the session consumed now, with a fresh signer credential
 * (a signing-link token for this one recipient, held by the page in memory only); or a session that was
 * used or has expired, which the page explains and reports to the bound origin.
 */
export type EmbedOpening =
  | { readonly _tag: 'Opened'; readonly session: EmbedSession; readonly credential: string }
  | { readonly _tag: 'Used'; readonly session: EmbedSession }
  | { readonly _tag: 'Expired'; readonly session: EmbedSession };

const unknownSession = () => notFound('embedded_session', 'given');

/**
 * How long the credential a load mints keeps working (1 hour): long enough to read and sign in one sitting,
 * short enough that a credential copied out of a page's memory is soon worth nothing. After it the frame's
 * calls answer 404 and the host mounts a fresh session.
 */
export const EMBED_CREDENTIAL_TTL_MS: number = 60 * 60 * 1000;

/**
 * The first load of an embedded session's page: consumes the session (single use, within its lifetime)
 * and mints the credential the page signs with; every later load finds it used. An unknown token is not
 * found. The credential works like a signing link of the recipient (the signer API), so the frame needs no
 * cookie.
 *
 * @example
 * const r = await openEmbeddedSession(deps)(token)();
 * // 'Opened': serve the page to frame-ancestors r.right.session.origin, holding r.right.credential.
 * if (E.isRight(r) && r.right._tag === 'Opened') console.log(r.right.session.origin);
 */
export const openEmbeddedSession =
  (deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly crypto: Crypto }) =>
  (token: string): TE.TaskEither<DomainError, EmbedOpening> => {
    if (!SIGNING_TOKEN_PATTERN.test(token)) return TE.left(unknownSession());
    const tokenHash = deps.crypto.sha256Hex(token);
    return deps.uow.transaction((tx) =>
      pipe(
        tx.embedSessions.findByTokenHash(tokenHash),
        TE.chainW((session): TE.TaskEither<DomainError, EmbedOpening> => {
          if (session === null) return TE.left(unknownSession());
          if (session.usedAt !== null) return TE.right({ _tag: 'Used', session });
          const now = deps.clock.now().toISOString();
          if (session.expiresAt <= now) return TE.right({ _tag: 'Expired', session });
          return pipe(
            tx.embedSessions.consume(tokenHash, now),
            TE.chainW((won) =>
              !won
                ? TE.right<DomainError, EmbedOpening>({ _tag: 'Used', session: { ...session, usedAt: now } })
                : pipe(
                    insertSigningLink(tx, deps, { orgId: session.orgId, mode: session.mode, requestId: session.requestId, recipientId: session.recipientId }, EMBED_CREDENTIAL_TTL_MS),
                    TE.map((link): EmbedOpening => ({ _tag: 'Opened', session: { ...session, usedAt: now }, credential: link.token })),
                  ),
            ),
          );
        }),
      ),
    );
  };
