import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { OAuthGrant } from '../../model/oauth.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import { ACCESS_TOKEN_TTL_S } from './rules.js';

/** The token endpoint's success body (RFC 6749 §5.1). */
export interface TokenResponse {
  readonly access_token: string;
  readonly token_type: 'Bearer';
  readonly expires_in: number;
  readonly refresh_token: string;
  readonly scope: string;
}

/** Mints an access token (1 h) and a refresh token for the grant; stores their hashes. */
export const issueTokens =
  (deps: { readonly clock: Clock; readonly crypto: Crypto }) =>
  (tx: Stores, grant: OAuthGrant): TE.TaskEither<StoreError, TokenResponse> => {
    const now = deps.clock.now();
    const access = `esig_oat_${deps.crypto.randomAlphanumeric(43)}`;
    const refresh = `esig_ort_${deps.crypto.randomAlphanumeric(43)}`;
    const createdAt = now.toISOString();
    return pipe(
      tx.oauth.insertToken({
        tokenHash: deps.crypto.sha256Hex(access),
        grantId: grant.id,
        kind: 'access',
        createdAt,
        expiresAt: new Date(now.getTime() + ACCESS_TOKEN_TTL_S * 1000).toISOString(),
        spentAt: null,
      }),
      TE.chain(() => tx.oauth.insertToken({ tokenHash: deps.crypto.sha256Hex(refresh), grantId: grant.id, kind: 'refresh', createdAt, expiresAt: null, spentAt: null })),
      TE.map(() => ({ access_token: access, token_type: 'Bearer' as const, expires_in: ACCESS_TOKEN_TTL_S, refresh_token: refresh, scope: grant.scopes.join(' ') })),
    );
  };
