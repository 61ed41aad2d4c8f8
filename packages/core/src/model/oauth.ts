import type { ApiScope } from './scopes.js';
import type { Mode } from './tenant.js';

/**
 * A client of the OAuth authorization server. `registered` clients came through dynamic registration
 * (RFC 7591) and are stored; `metadata_document` clients are identified by the https URL of their Client ID
 * Metadata Document, fetched when needed and never stored.
 */
export interface OAuthClient {
  readonly id: string;
  readonly name: string;
  readonly redirectUris: readonly string[];
  readonly kind: 'registered' | 'metadata_document';
  readonly createdAt: string;
}

/**
 * An authorization code, stored as the SHA-256 of the code. Single use, short-lived, bound to the client,
 * the redirect URI, the PKCE challenge and the resource; it carries the consent (the key, its tenant, the
 * granted scopes). `grantId` is the grant it was exchanged for, once used.
 */
export interface AuthorizationCode {
  readonly codeHash: string;
  readonly clientId: string;
  readonly redirectUri: string;
  /** BASE64URL(SHA-256(code_verifier)): only S256 is accepted. */
  readonly codeChallenge: string;
  readonly resource: string;
  readonly scopes: readonly ApiScope[];
  readonly orgId: string;
  readonly mode: Mode;
  readonly keyId: string;
  readonly createdAt: string;
  readonly expiresAt: string;
  readonly usedAt: string | null;
  readonly grantId: string | null;
}

/**
 * What an org's administrator consented to: client `clientId` may act with `scopes` on the key's org and
 * mode. Tokens come and go (access tokens expire, refresh tokens rotate); the grant stays until revoked.
 */
export interface OAuthGrant {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  /** The API key that consented: revoking it revokes the grant. */
  readonly keyId: string;
  readonly clientId: string;
  readonly clientName: string;
  readonly scopes: readonly ApiScope[];
  readonly resource: string;
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

/** A token of a grant, stored as the SHA-256 of the secret. A refresh token is spent when rotated. */
export interface OAuthToken {
  readonly tokenHash: string;
  readonly grantId: string;
  readonly kind: 'access' | 'refresh';
  readonly createdAt: string;
  /** Access tokens expire; refresh tokens live as long as their grant (null). */
  readonly expiresAt: string | null;
  readonly spentAt: string | null;
}
