import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { OAuthClient } from '../../model/oauth.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import type { TokenResponse } from './issue-tokens.js';
import { issueTokens } from './issue-tokens.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { REFRESH_TOKEN_PATTERN } from './rules.js';

type Refreshed = OAuthError | { readonly _tag: 'Issued'; readonly tokens: TokenResponse };

const invalidGrant = () => oauthError('invalid_grant', 'The refresh token is unknown, spent or revoked.');

/**
 * The refresh_token grant with rotation: the presented token is spent and a new access + refresh pair
 * issued. Presenting a spent refresh token again revokes the whole grant (OAuth 2.1 §4.3.1: one of the two
 * holders is an attacker, and the server cannot tell which).
 *
 * @example
 * const oauthClient = await resolveOAuthClient({ ...deps, metadata: { fetch: () => async () => ({ ok: false, reason: 'none' }) } })('ocl_…')();
 * if (E.isRight(oauthClient)) await refreshAccessToken(deps)({ client: oauthClient.right, refreshToken: token, resource: undefined })();
 */
export const refreshAccessToken =
  (deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly crypto: Crypto }) =>
  (input: { readonly client: OAuthClient; readonly refreshToken: string; readonly resource: string | undefined }): TE.TaskEither<OAuthError | StoreError, TokenResponse> => {
    if (!REFRESH_TOKEN_PATTERN.test(input.refreshToken)) return TE.left(invalidGrant());
    return pipe(
      deps.uow.transaction((tx) => refreshIn(deps, input, tx)),
      TE.chainW((r) => (r._tag === 'OAuthError' ? TE.left(r) : TE.right(r.tokens))),
    );
  };

const refreshIn = (
  deps: { readonly clock: Clock; readonly crypto: Crypto },
  input: { readonly client: OAuthClient; readonly refreshToken: string; readonly resource: string | undefined },
  tx: Stores,
): TE.TaskEither<StoreError, OAuthError | { readonly _tag: 'Issued'; readonly tokens: TokenResponse }> => {
  const now = deps.clock.now().toISOString();
  const hash = deps.crypto.sha256Hex(input.refreshToken);
  return pipe(
    tx.oauth.findToken(hash),
    TE.chain((token) => (token === null || token.kind !== 'refresh' ? TE.right(null) : pipe(tx.oauth.findGrant(token.grantId), TE.map((grant) => (grant === null ? null : { token, grant }))))),
    TE.chain((found): TE.TaskEither<StoreError, Refreshed> => {
      if (found === null || found.grant.revokedAt !== null) return TE.right(invalidGrant());
      const { grant } = found;
      if (grant.clientId !== input.client.id) return TE.right(invalidGrant());
      if (input.resource !== undefined && input.resource !== grant.resource) return TE.right(oauthError('invalid_target', 'The resource differs from the grant.'));
      return pipe(
        tx.oauth.spendToken(hash, now),
        TE.chain((spent): TE.TaskEither<StoreError, Refreshed> =>
          spent
            ? pipe(
                tx.apiKeys.findById({ orgId: grant.orgId, mode: grant.mode }, grant.keyId),
                TE.chain((key): TE.TaskEither<StoreError, Refreshed> =>
                  key === null || key.revokedAt !== null
                    ? pipe(
                        tx.oauth.revokeGrant(grant.id, now),
                        TE.map(() => invalidGrant()),
                      )
                    : pipe(
                        issueTokens(deps)(tx, grant),
                        TE.map((tokens) => ({ _tag: 'Issued' as const, tokens })),
                      ),
                ),
              )
            : // Reuse of a spent token: revoke the grant, and the refusal commits with it.
              pipe(
                tx.oauth.revokeGrant(grant.id, now),
                TE.map(() => invalidGrant()),
              ),
        ),
      );
    }),
  );
};
