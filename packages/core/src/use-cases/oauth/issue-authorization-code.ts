import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { AuthorizationCode } from '../../model/oauth.js';
import type { Principal } from '../../model/principal.js';
import type { ApiScope } from '../../model/scopes.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { Stores } from '../../ports/stores.js';
import type { ValidAuthorizationRequest } from './authorization-request.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { AUTHORIZATION_CODE_TTL_S, grantableScopes } from './rules.js';

/**
 * The administrator's "allow": an authorization code for the request, carrying the consent of the API key
 * that signed in. Granted scopes = requested ∩ the key's scopes (never `api_keys:write`); none left →
 * `invalid_scope`. The code is single use and lives 60 s; only its hash is stored.
 *
 * @example
 * const oauthClient = await resolveOAuthClient({ ...deps, metadata: { fetch: () => async () => ({ ok: false, reason: 'none' }) } })('ocl_…')();
 * if (E.isRight(oauthClient)) {
 *   const checked = checkAuthorizationRequest(oauthClient.right, { responseType: 'code', redirectUri: undefined, codeChallenge: token, codeChallengeMethod: 'S256', resource: `${publicUrl}/mcp`, scope: 'documents:read', state: undefined }, `${publicUrl}/mcp`);
 *   if (checked.ok) await deps.uow.transaction(issueAuthorizationCode(deps)(me, checked.request))();
 * }
 */
export const issueAuthorizationCode =
  (deps: { readonly clock: Clock; readonly crypto: Crypto }) =>
  (consenting: Principal, request: ValidAuthorizationRequest) =>
  (tx: Stores): TE.TaskEither<OAuthError | StoreError, { readonly code: string; readonly scopes: readonly ApiScope[] }> => {
    if (consenting.credential.kind !== 'api_key') return TE.left(oauthError('access_denied', 'Sign in with an API key of the organization.'));
    const scopes = grantableScopes(request.requestedScopes, consenting.scopes);
    if (scopes.length === 0) return TE.left(oauthError('invalid_scope', 'The API key holds none of the requested scopes.'));
    const now = deps.clock.now();
    const code = deps.crypto.randomAlphanumeric(43);
    const record: AuthorizationCode = {
      codeHash: deps.crypto.sha256Hex(code),
      clientId: request.client.id,
      redirectUri: request.redirectUri,
      codeChallenge: request.codeChallenge,
      resource: request.resource,
      scopes,
      orgId: consenting.tenant.orgId,
      mode: consenting.tenant.mode,
      keyId: consenting.credential.keyId,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + AUTHORIZATION_CODE_TTL_S * 1000).toISOString(),
      usedAt: null,
      grantId: null,
    };
    return pipe(
      tx.oauth.insertCode(record),
      TE.map(() => ({ code, scopes })),
    );
  };
