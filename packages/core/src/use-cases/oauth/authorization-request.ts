import type { OAuthClient } from '../../model/oauth.js';
import type { OAuthError } from './oauth-error.js';
import { oauthError } from './oauth-error.js';
import { CODE_CHALLENGE_PATTERN, parseScopeParam, redirectUriMatches } from './rules.js';

/** The parameters of an authorization request, as they arrived (query or form). */
export interface AuthorizationParams {
  readonly responseType: string | undefined;
  readonly redirectUri: string | undefined;
  readonly codeChallenge: string | undefined;
  readonly codeChallengeMethod: string | undefined;
  readonly resource: string | undefined;
  readonly scope: string | undefined;
  readonly state: string | undefined;
}

/** An authorization request that may be shown for consent. */
export interface ValidAuthorizationRequest {
  readonly client: OAuthClient;
  readonly redirectUri: string;
  readonly codeChallenge: string;
  readonly resource: string;
  readonly requestedScopes: readonly string[];
  readonly state: string | undefined;
}

/**
 * Where an authorization request's error goes (RFC 6749 §4.1.2.1): a bad redirect URI is never redirected
 * to (`redirect: null`, shown to the user instead); every later error goes back to the client's redirect URI.
 */
export type AuthorizationRequestError = { readonly error: OAuthError; readonly redirect: string | null; readonly state: string | undefined };

/**
 * Checks an authorization request against the client and this server's rules: code flow only, PKCE S256
 * only, `resource` must be the tool server (`expectedResource`, RFC 8707 `invalid_target`).
 */
export const checkAuthorizationRequest = (
  client: OAuthClient,
  p: AuthorizationParams,
  expectedResource: string,
): { readonly ok: true; readonly request: ValidAuthorizationRequest } | ({ readonly ok: false } & AuthorizationRequestError) => {
  // With a single registered URI, the parameter may be left out (RFC 6749 §3.1.2.3); never for a metadata document.
  const redirectUri = p.redirectUri ?? (client.redirectUris.length === 1 && client.kind === 'registered' ? client.redirectUris[0] : undefined);
  if (redirectUri === undefined || !redirectUriMatches(client.redirectUris, redirectUri))
    return { ok: false, error: oauthError('invalid_request', 'The redirect_uri is missing or not registered for this client.'), redirect: null, state: p.state };
  const fail = (error: OAuthError) => ({ ok: false as const, error, redirect: redirectUri, state: p.state });
  if (p.responseType !== 'code') return fail(oauthError('unsupported_response_type', 'Only response_type=code is supported.'));
  if (p.codeChallenge === undefined) return fail(oauthError('invalid_request', 'PKCE is required: send code_challenge and code_challenge_method=S256.'));
  if (p.codeChallengeMethod !== 'S256') return fail(oauthError('invalid_request', 'Only code_challenge_method=S256 is supported.'));
  if (!CODE_CHALLENGE_PATTERN.test(p.codeChallenge)) return fail(oauthError('invalid_request', 'The code_challenge is not a base64url SHA-256 digest.'));
  if (p.resource !== expectedResource) return fail(oauthError('invalid_target', `The resource must be ${expectedResource}.`));
  return {
    ok: true,
    request: { client, redirectUri, codeChallenge: p.codeChallenge, resource: p.resource, requestedScopes: parseScopeParam(p.scope), state: p.state },
  };
};
