import type { ApiScope, AuthorizationCode, OAuthClient, OAuthGrant, OAuthToken } from '@esig/core';
import { API_SCOPES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, oneOf, rowType } from '../decode.js';

export const ApiScopeC = oneOf<ApiScope>([...API_SCOPES], 'ApiScope');
export const OAuthClientKindC = oneOf<OAuthClient['kind']>(['registered', 'metadata_document'], 'OAuthClientKind');
export const OAuthTokenKindC = oneOf<OAuthToken['kind']>(['access', 'refresh'], 'OAuthTokenKind');

export const OAUTH_CLIENT_COLUMNS = 'id, name, redirect_uris, kind, created_at';
export const OAUTH_CODE_COLUMNS = 'code_hash, client_id, redirect_uri, code_challenge, resource, scopes, org_id, mode, key_id, created_at, expires_at, used_at, grant_id';
export const OAUTH_GRANT_COLUMNS = 'id, org_id, mode, key_id, client_id, client_name, scopes, resource, created_at, revoked_at';
export const OAUTH_TOKEN_COLUMNS = 'token_hash, grant_id, kind, created_at, expires_at, spent_at';

export const oauthClientRow = (c: ColumnCodecs) =>
  rowType({ id: t.string, name: t.string, redirect_uris: c.json(t.readonlyArray(t.string)), kind: OAuthClientKindC, created_at: c.timestamp });

export const toOAuthClient = (r: t.TypeOf<ReturnType<typeof oauthClientRow>>): OAuthClient => ({
  id: r.id,
  name: r.name,
  redirectUris: r.redirect_uris,
  kind: r.kind,
  createdAt: r.created_at,
});

export const oauthCodeRow = (c: ColumnCodecs) =>
  rowType({
    code_hash: t.string,
    client_id: t.string,
    redirect_uri: t.string,
    code_challenge: t.string,
    resource: t.string,
    scopes: c.json(t.readonlyArray(ApiScopeC)),
    org_id: t.string,
    mode: ModeC,
    key_id: t.string,
    created_at: c.timestamp,
    expires_at: c.timestamp,
    used_at: nullable(c.timestamp),
    grant_id: nullable(t.string),
  });

export const toAuthorizationCode = (r: t.TypeOf<ReturnType<typeof oauthCodeRow>>): AuthorizationCode => ({
  codeHash: r.code_hash,
  clientId: r.client_id,
  redirectUri: r.redirect_uri,
  codeChallenge: r.code_challenge,
  resource: r.resource,
  scopes: r.scopes,
  orgId: r.org_id,
  mode: r.mode,
  keyId: r.key_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
  grantId: r.grant_id,
});

export const oauthGrantRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    key_id: t.string,
    client_id: t.string,
    client_name: t.string,
    scopes: c.json(t.readonlyArray(ApiScopeC)),
    resource: t.string,
    created_at: c.timestamp,
    revoked_at: nullable(c.timestamp),
  });

export const toOAuthGrant = (r: t.TypeOf<ReturnType<typeof oauthGrantRow>>): OAuthGrant => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  keyId: r.key_id,
  clientId: r.client_id,
  clientName: r.client_name,
  scopes: r.scopes,
  resource: r.resource,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

export const oauthTokenRow = (c: ColumnCodecs) =>
  rowType({
    token_hash: t.string,
    grant_id: t.string,
    kind: OAuthTokenKindC,
    created_at: c.timestamp,
    expires_at: nullable(c.timestamp),
    spent_at: nullable(c.timestamp),
  });

export const toOAuthToken = (r: t.TypeOf<ReturnType<typeof oauthTokenRow>>): OAuthToken => ({
  tokenHash: r.token_hash,
  grantId: r.grant_id,
  kind: r.kind,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  spentAt: r.spent_at,
});

/** The values of a row to insert, in the order of the `*_COLUMNS` lists (JSON columns as text). */
export const oauthClientValues = (x: OAuthClient) => [x.id, x.name, JSON.stringify(x.redirectUris), x.kind, x.createdAt];
export const oauthCodeValues = (x: AuthorizationCode) => [
  x.codeHash,
  x.clientId,
  x.redirectUri,
  x.codeChallenge,
  x.resource,
  JSON.stringify(x.scopes),
  x.orgId,
  x.mode,
  x.keyId,
  x.createdAt,
  x.expiresAt,
  x.usedAt,
  x.grantId,
];
export const oauthGrantValues = (x: OAuthGrant) => [x.id, x.orgId, x.mode, x.keyId, x.clientId, x.clientName, JSON.stringify(x.scopes), x.resource, x.createdAt, x.revokedAt];
export const oauthTokenValues = (x: OAuthToken) => [x.tokenHash, x.grantId, x.kind, x.createdAt, x.expiresAt, x.spentAt];
