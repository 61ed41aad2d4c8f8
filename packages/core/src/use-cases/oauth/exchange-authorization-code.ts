import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { AuthorizationCode, OAuthClient, OAuthGrant } from '../../model/oauth.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import type { TokenResponse } from './issue-tokens.js';
import { issueTokens } from './issue-tokens.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { AUTHORIZATION_CODE_PATTERN, CODE_VERIFIER_PATTERN, hexToBase64Url } from './rules.js';

export interface CodeExchange {
  readonly client: OAuthClient;
  readonly code: string;
  readonly codeVerifier: string | undefined;
  readonly redirectUri: string | undefined;
  /** RFC 8707: optional at the token endpoint; when sent it must be the code's. */
  readonly resource: string | undefined;
}

const invalidGrant = (d: string) => oauthError('invalid_grant', d);

/**
 * The authorization_code grant: consumes the code (single use) and checks everything it is bound to — the
 * client, the redirect URI, the PKCE verifier (S256), the resource, its 60 s — and that the consenting key
 * is still valid; then creates the grant and its first tokens. A code presented a second time is refused
 * and the grant made from it is revoked (RFC 6749 §4.1.2: a replayed code may mean it was stolen).
 *
 * @example
 * const oauthClient = await resolveOAuthClient({ ...deps, metadata: { fetch: () => async () => ({ ok: false, reason: 'none' }) } })('ocl_…')();
 * if (E.isRight(oauthClient))
 *   await exchangeAuthorizationCode(deps)({ client: oauthClient.right, code: token, codeVerifier: token, redirectUri: 'http://127.0.0.1:7777/cb', resource: `${publicUrl}/mcp` })();
 */
export const exchangeAuthorizationCode =
  (deps: { readonly uow: UnitOfWork; readonly clock: Clock; readonly crypto: Crypto; readonly ids: IdGenerator }) =>
  (input: CodeExchange): TE.TaskEither<OAuthError | StoreError, TokenResponse> => {
    if (!AUTHORIZATION_CODE_PATTERN.test(input.code)) return TE.left(invalidGrant('The code is unknown, expired or already used.'));
    if (input.codeVerifier === undefined || !CODE_VERIFIER_PATTERN.test(input.codeVerifier))
      return TE.left(oauthError('invalid_request', 'code_verifier is required (43 to 128 unreserved characters).'));
    // Refusals after the code is consumed still commit (the code stays used, a replayed code's grant stays
    // revoked): the transaction returns them as values, and they become Lefts after it.
    return pipe(
      deps.uow.transaction((tx) => exchangeIn(deps, input, input.codeVerifier!, tx)),
      TE.chainW((r) => (r._tag === 'OAuthError' ? TE.left(r) : TE.right(r.tokens))),
    );
  };

const exchangeIn = (
  deps: { readonly clock: Clock; readonly crypto: Crypto; readonly ids: IdGenerator },
  input: CodeExchange,
  verifier: string,
  tx: Stores,
): TE.TaskEither<StoreError, OAuthError | { readonly _tag: 'Issued'; readonly tokens: TokenResponse }> => {
    const now = deps.clock.now();
    const grantId = deps.ids.next('oag');
    return pipe(
      tx.oauth.useCode(deps.crypto.sha256Hex(input.code), now.toISOString(), grantId),
      TE.chainW((code): TE.TaskEither<OAuthError | StoreError, { readonly replayed: true } | { readonly replayed: false; readonly code: AuthorizationCode }> => {
        if (code === null) return TE.left(invalidGrant('The code is unknown, expired or already used.'));
        if (code.usedAt !== null)
          return pipe(
            code.grantId === null ? TE.right<StoreError, void>(undefined) : tx.oauth.revokeGrant(code.grantId, now.toISOString()),
            // The revocation must commit although the request fails: it is returned as a value, not a Left.
            TE.map(() => ({ replayed: true as const })),
          );
        if (code.expiresAt <= now.toISOString()) return TE.left(invalidGrant('The code is unknown, expired or already used.'));
        if (code.clientId !== input.client.id) return TE.left(invalidGrant('The code was issued to another client.'));
        // RFC 6749 §4.1.3: required only if the authorization request sent it, which a client with one registered URI
        // may leave out (authorization-request.ts); then that URI is the one the code was issued for.
        const redirectUri = input.redirectUri ?? (input.client.kind === 'registered' && input.client.redirectUris.length === 1 ? input.client.redirectUris[0] : undefined);
        if (redirectUri !== code.redirectUri) return TE.left(invalidGrant('The redirect_uri differs from the authorization request.'));
        if (hexToBase64Url(deps.crypto.sha256Hex(verifier)) !== code.codeChallenge) return TE.left(invalidGrant('The code_verifier does not match the code_challenge.'));
        if (input.resource !== undefined && input.resource !== code.resource) return TE.left(oauthError('invalid_target', 'The resource differs from the authorization request.'));
        return pipe(
          tx.apiKeys.findById({ orgId: code.orgId, mode: code.mode }, code.keyId),
          TE.chainW((key) => (key === null || key.revokedAt !== null ? TE.left(invalidGrant('The API key that consented has been revoked.')) : TE.right<OAuthError, AuthorizationCode>(code))),
          TE.map((c) => ({ replayed: false as const, code: c })),
        );
      }),
      TE.chainW((r) => {
        if (r.replayed) return TE.right<OAuthError | StoreError, TokenResponse | null>(null);
        const grant: OAuthGrant = {
          id: grantId,
          orgId: r.code.orgId,
          mode: r.code.mode,
          keyId: r.code.keyId,
          clientId: input.client.id,
          clientName: input.client.name,
          scopes: r.code.scopes,
          resource: r.code.resource,
          createdAt: now.toISOString(),
          revokedAt: null,
        };
        return pipe(
          tx.oauth.insertGrant(grant),
          TE.chain(() => issueTokens(deps)(tx, grant)),
        );
      }),
      TE.map((t) => (t === null ? invalidGrant('The code has already been used; the grant made from it is revoked.') : { _tag: 'Issued' as const, tokens: t })),
      TE.orElseW((e) => (e._tag === 'OAuthError' ? TE.right(e) : TE.left(e))),
    );
};
