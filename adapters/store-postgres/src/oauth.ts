import type { OAuthStore, StoreError } from '@esig/core';
import { concurrentModification } from '@esig/core';
import {
  OAUTH_CLIENT_COLUMNS,
  OAUTH_CODE_COLUMNS,
  OAUTH_GRANT_COLUMNS,
  OAUTH_TOKEN_COLUMNS,
  oauthClientRow,
  oauthClientValues,
  oauthCodeRow,
  oauthCodeValues,
  oauthGrantRow,
  oauthGrantValues,
  oauthTokenRow,
  oauthTokenValues,
  toAuthorizationCode,
  toOAuthClient,
  toOAuthGrant,
  toOAuthToken,
} from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { columnCodecs, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const decodeClient = rowDecoder(oauthClientRow(columnCodecs), 'oauth_clients', toOAuthClient);
const decodeCode = rowDecoder(oauthCodeRow(columnCodecs), 'oauth_codes', toAuthorizationCode, 'client_id');
const decodeGrant = rowDecoder(oauthGrantRow(columnCodecs), 'oauth_grants', toOAuthGrant);
const decodeToken = rowDecoder(oauthTokenRow(columnCodecs), 'oauth_tokens', toOAuthToken, 'grant_id');
const GRANTS: KeysetTable = { table: 'oauth_grants', columns: OAUTH_GRANT_COLUMNS };

const JSON_COLUMNS = new Set(['redirect_uris', 'scopes']);
const placeholders = (columns: string) =>
  columns
    .split(',')
    .map((c, i) => (JSON_COLUMNS.has(c.trim()) ? `$${i + 1}::jsonb` : `$${i + 1}`))
    .join(', ');

const insert = (conn: Conn, table: string, columns: string, values: readonly unknown[], taken: () => StoreError) =>
  pipe(
    run(conn, 'write', `INSERT INTO ${table} (${columns}) VALUES (${placeholders(columns)}) ON CONFLICT DO NOTHING`, values, taken),
    TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
  );

const one = <A>(conn: Conn, sql: string, args: readonly unknown[], dec: (row: unknown) => E.Either<StoreError, A>) =>
  pipe(
    run(conn, 'read', sql, args),
    TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : dec(row))),
  );

/**
 * The oldest registered clients created in (`$1`, `$2`) that no code or grant names: a range of
 * `oauth_clients_registered`, each client checked in the codes' and grants' indexes by client (migration 0014,
 * in collation "C", as `oauth_clients.id` compares), and deleted by primary key. A client being authorized at
 * this moment loses only that authorization (its code names a client that is gone).
 */
const PURGE_UNUSED_CLIENTS = `DELETE FROM oauth_clients WHERE id = ANY (ARRAY(
  SELECT c.id FROM oauth_clients c
  WHERE c.kind = 'registered' AND c.created_at > $1 AND c.created_at < $2
    AND NOT EXISTS (SELECT 1 FROM oauth_codes k WHERE k.client_id = c.id)
    AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
  ORDER BY c.created_at, c.id LIMIT $3))`;

/** The OAuthStore. Codes and tokens are looked up by hash, grants by id, across tenants, as the port says. */
export const pgOAuth = (conn: Conn): OAuthStore => ({
  insertClient: (x) => insert(conn, 'oauth_clients', OAUTH_CLIENT_COLUMNS, oauthClientValues(x), () => concurrentModification('oauth_client', x.id)),
  findClient: (id) => one(conn, `SELECT ${OAUTH_CLIENT_COLUMNS} FROM oauth_clients WHERE id = $1`, [id], decodeClient),
  insertCode: (x) => insert(conn, 'oauth_codes', OAUTH_CODE_COLUMNS, oauthCodeValues(x), () => concurrentModification('authorization_code', x.clientId)),
  useCode: (hash, at, grantId) =>
    pipe(
      // The conditional UPDATE takes the row lock: of two concurrent calls, exactly one matches `used_at IS NULL`.
      run(conn, 'write', `UPDATE oauth_codes SET used_at = $2, grant_id = $3 WHERE code_hash = $1 AND used_at IS NULL RETURNING ${OAUTH_CODE_COLUMNS}`, [hash, at, grantId]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : pipe(decodeCode(row), E.map((c) => ({ ...c, usedAt: null, grantId: null }))))),
      TE.chain((consumed) => (consumed !== null ? TE.right(consumed) : one(conn, `SELECT ${OAUTH_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = $1`, [hash], decodeCode))),
    ),
  insertGrant: (x) => insert(conn, 'oauth_grants', OAUTH_GRANT_COLUMNS, oauthGrantValues(x), () => concurrentModification('oauth_grant', x.id)),
  findGrant: (id) => one(conn, `SELECT ${OAUTH_GRANT_COLUMNS} FROM oauth_grants WHERE id = $1`, [id], decodeGrant),
  listGrants: (tenant, query) => listKeyset(conn, GRANTS, tenant, query, undefined, decodeGrant),
  revokeGrant: (id, at) =>
    pipe(
      run(conn, 'write', 'UPDATE oauth_grants SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL', [id, at]),
      TE.map(() => undefined),
    ),
  revokeGrantsOfKey: (keyId, at) =>
    pipe(
      run(conn, 'write', 'UPDATE oauth_grants SET revoked_at = $2 WHERE key_id = $1 AND revoked_at IS NULL', [keyId, at]),
      TE.map(() => undefined),
    ),
  insertToken: (x) => insert(conn, 'oauth_tokens', OAUTH_TOKEN_COLUMNS, oauthTokenValues(x), () => concurrentModification('oauth_token', x.grantId)),
  findToken: (hash) => one(conn, `SELECT ${OAUTH_TOKEN_COLUMNS} FROM oauth_tokens WHERE token_hash = $1`, [hash], decodeToken),
  spendToken: (hash, at) =>
    pipe(
      run(conn, 'write', 'UPDATE oauth_tokens SET spent_at = $2 WHERE token_hash = $1 AND spent_at IS NULL', [hash, at]),
      TE.map((r) => r.rowCount === 1),
    ),
  purgeUnusedClients: (after, before, limit) =>
    pipe(
      run(conn, 'write', PURGE_UNUSED_CLIENTS, [after ?? '-infinity', before, limit]),
      TE.map((r) => r.rowCount ?? 0),
    ),
});
