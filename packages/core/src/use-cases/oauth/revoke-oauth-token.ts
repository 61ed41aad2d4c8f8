import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';

/**
 * Token revocation (RFC 7009): revoking an access or a refresh token revokes its whole grant (§2.1 allows
 * it, and a client that hands back one token is done with the grant). An unknown token (or one whose grant is gone)
 * is answered like a success and changes nothing (§2.2: a client can do nothing with such an error). A live token
 * issued to another client than the `clientId` given is refused (§2.1), `unauthorized_client`, and changes nothing:
 * answered like a success, a client that named itself wrongly was told its token was revoked while it still worked.
 * Another client's token that no longer works (expired, spent, its grant revoked) is answered like an unknown one.
 *
 * @example
 * await deps.uow.transaction(revokeOAuthToken(deps)({ token, clientId: undefined }))();
 */
export const revokeOAuthToken =
  (deps: { readonly clock: Clock; readonly crypto: Crypto }) =>
  (input: { readonly token: string; readonly clientId: string | undefined }) =>
  (tx: Stores): TE.TaskEither<StoreError | OAuthError, void> =>
    pipe(
      tx.oauth.findToken(deps.crypto.sha256Hex(input.token)),
      TE.chain((t) => (t === null ? TE.right(null) : pipe(tx.oauth.findGrant(t.grantId), TE.map((g) => (g === null ? null : { t, g }))))),
      TE.chainW((found): TE.TaskEither<StoreError | OAuthError, void> => {
        if (found === null) return TE.right(undefined);
        const { t, g } = found;
        const at = deps.clock.now().toISOString();
        if (input.clientId === undefined || g.clientId === input.clientId) return tx.oauth.revokeGrant(g.id, at);
        // Another client's token that no longer works (expired, spent, its grant revoked) is as good as unknown.
        const live = g.revokedAt === null && t.spentAt === null && (t.expiresAt === null || t.expiresAt > at);
        return live ? TE.left(oauthError('unauthorized_client', 'This token was issued to another client.')) : TE.right(undefined);
      }),
    );
