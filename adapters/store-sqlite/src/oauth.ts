import type { OAuthStore } from '@esig/core';
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
import { attempt } from './connection.js';
import { limitParam } from './sql-text.js';
import { columnCodecs, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

/**
 * The oldest registered clients created in (after, before) that no code or grant names: a range of
 * `oauth_clients_registered`, each client checked in the codes' and grants' indexes by client (migration 0008).
 */
const PURGE_UNUSED_CLIENTS = `DELETE FROM oauth_clients WHERE id IN (
  SELECT c.id FROM oauth_clients c
  WHERE c.kind = 'registered' AND c.created_at > ? AND c.created_at < ?
    AND NOT EXISTS (SELECT 1 FROM oauth_codes k WHERE k.client_id = c.id)
    AND NOT EXISTS (SELECT 1 FROM oauth_grants g WHERE g.client_id = c.id)
  ORDER BY c.created_at, c.id ${limitParam('?')})`;

const decodeClient = rowDecoder(oauthClientRow(columnCodecs), 'oauth_clients', toOAuthClient);
const decodeCode = rowDecoder(oauthCodeRow(columnCodecs), 'oauth_codes', toAuthorizationCode, 'client_id');
const decodeGrant = rowDecoder(oauthGrantRow(columnCodecs), 'oauth_grants', toOAuthGrant);
const decodeToken = rowDecoder(oauthTokenRow(columnCodecs), 'oauth_tokens', toOAuthToken, 'grant_id');
const GRANTS: KeysetTable = { table: 'oauth_grants', columns: OAUTH_GRANT_COLUMNS };

const placeholders = (columns: string) => columns.split(',').map(() => '?').join(', ');

const insert = (conn: Conn, table: string, columns: string, values: readonly unknown[], taken: () => ReturnType<typeof concurrentModification>) =>
  pipe(
    attempt(conn, (c) => c.prepare(`INSERT INTO ${table} (${columns}) VALUES (${placeholders(columns)})`).run(...values), taken),
    TE.map(() => undefined),
  );

/** The OAuthStore. Codes and tokens are looked up by hash, grants by id, across tenants, as the port says. */
export const sqliteOAuth = (conn: Conn): OAuthStore => ({
  insertClient: (x) => insert(conn, 'oauth_clients', OAUTH_CLIENT_COLUMNS, oauthClientValues(x), () => concurrentModification('oauth_client', x.id)),
  findClient: (id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${OAUTH_CLIENT_COLUMNS} FROM oauth_clients WHERE id = ?`).get(id)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeClient(row))),
    ),
  insertCode: (x) => insert(conn, 'oauth_codes', OAUTH_CODE_COLUMNS, oauthCodeValues(x), () => concurrentModification('authorization_code', x.clientId)),
  useCode: (hash, at, grantId) =>
    pipe(
      attempt(conn, (c) => {
        // One connection writes at a time: the read and the conditional update cannot interleave with another's.
        const before = c.prepare(`SELECT ${OAUTH_CODE_COLUMNS} FROM oauth_codes WHERE code_hash = ?`).get(hash);
        c.prepare('UPDATE oauth_codes SET used_at = ?, grant_id = ? WHERE code_hash = ? AND used_at IS NULL').run(at, grantId, hash);
        return before;
      }),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeCode(row))),
    ),
  insertGrant: (x) => insert(conn, 'oauth_grants', OAUTH_GRANT_COLUMNS, oauthGrantValues(x), () => concurrentModification('oauth_grant', x.id)),
  findGrant: (id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${OAUTH_GRANT_COLUMNS} FROM oauth_grants WHERE id = ?`).get(id)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeGrant(row))),
    ),
  listGrants: (tenant, query) => listKeyset(conn, GRANTS, tenant, query, undefined, decodeGrant),
  revokeGrant: (id, at) =>
    pipe(
      attempt(conn, (c) => c.prepare('UPDATE oauth_grants SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(at, id)),
      TE.map(() => undefined),
    ),
  revokeGrantsOfKey: (keyId, at) =>
    pipe(
      attempt(conn, (c) => c.prepare('UPDATE oauth_grants SET revoked_at = ? WHERE key_id = ? AND revoked_at IS NULL').run(at, keyId)),
      TE.map(() => undefined),
    ),
  insertToken: (x) => insert(conn, 'oauth_tokens', OAUTH_TOKEN_COLUMNS, oauthTokenValues(x), () => concurrentModification('oauth_token', x.grantId)),
  findToken: (hash) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${OAUTH_TOKEN_COLUMNS} FROM oauth_tokens WHERE token_hash = ?`).get(hash)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeToken(row))),
    ),
  spendToken: (hash, at) =>
    pipe(
      attempt(conn, (c) => c.prepare('UPDATE oauth_tokens SET spent_at = ? WHERE token_hash = ? AND spent_at IS NULL').run(at, hash)),
      TE.map((r) => r.changes === 1),
    ),
  purgeUnusedClients: (after, before, limit) =>
    pipe(
      // '' sorts before every timestamp.
      attempt(conn, (c) => c.prepare(PURGE_UNUSED_CLIENTS).run(after ?? '', before, limit)),
      TE.map((r) => r.changes),
    ),
});
