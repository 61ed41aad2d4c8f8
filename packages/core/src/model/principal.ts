import type { GrantedScope } from './scopes.js';
import type { Tenant } from './tenant.js';

/**
 * The credential a call was made with. The reference server knows API keys and OAuth access tokens; a
 * backend that embeds the core names its own users with `external`.
 */
export type Credential =
  | { readonly kind: 'api_key'; readonly keyId: string }
  /** An OAuth access token, granted by the API key `keyId` to the client `clientId` (grant `grantId`). */
  | { readonly kind: 'access_token'; readonly keyId: string; readonly clientId: string; readonly grantId: string }
  /** Anything of your own (a user, a service account): `id` is stable for the same caller. */
  | { readonly kind: 'external'; readonly id: string };

/**
 * Who is calling: resolved before any use case runs (from an API key, an OAuth token, or your backend's own
 * user). Use cases decide with `tenant` (whose data) and `scopes` (what it may do); `credential` says who, for
 * the request log, rate limits and the ownership of idempotent responses.
 *
 * @example
 * // Your backend's signed-in user, acting on its organization's test data:
 * const me: Principal = { tenant: { orgId: 'org_acme', mode: 'test' }, scopes: ['*'], credential: { kind: 'external', id: 'user_42' } };
 */
export interface Principal {
  readonly tenant: Tenant;
  readonly scopes: readonly GrantedScope[];
  readonly credential: Credential;
}

/**
 * A stable text naming the credential (`key:key_…`, `grant:…`, `ext:…`): the unit of ownership of an
 * idempotent response and of a per-credential rate-limit budget. A grant's tokens rotate; the grant stays.
 */
export const credentialId = (c: Credential): string => {
  switch (c.kind) {
    case 'api_key':
      return `key:${c.keyId}`;
    case 'access_token':
      return `grant:${c.grantId}`;
    case 'external':
      return `ext:${c.id}`;
  }
};

/** The API key behind a credential (the key itself, or the one that granted a token), null for your own users. */
export const keyIdOf = (c: Credential): string | null => (c.kind === 'external' ? null : c.keyId);
