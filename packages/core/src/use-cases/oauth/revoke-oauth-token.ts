import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';

/**
 * Token revocation (RFC 7009): revoking an access or a refresh token revokes its whole grant (§2.1 allows
 * it, and a client that hands back one token is done with the grant). An unknown token, or one of another
 * client (when `clientId` is given), is answered like a success and changes nothing.
 *
 * @example
 * await deps.uow.transaction(revokeOAuthToken(deps)({ token, clientId: undefined }))();
 */
export const revokeOAuthToken =
  (deps: { readonly clock: Clock; readonly crypto: Crypto }) =>
  (input: { readonly token: string; readonly clientId: string | undefined }) =>
  (tx: Stores): TE.TaskEither<StoreError, void> =>
    pipe(
      tx.oauth.findToken(deps.crypto.sha256Hex(input.token)),
      TE.chain((t) => (t === null ? TE.right(null) : tx.oauth.findGrant(t.grantId))),
      TE.chain((g) => (g === null || (input.clientId !== undefined && g.clientId !== input.clientId) ? TE.right(undefined) : tx.oauth.revokeGrant(g.id, deps.clock.now().toISOString()))),
    );
