import type { ApiKey, ApiKeyStore, GrantedScope } from '@esig/core';
import { API_SCOPES, concurrentModification } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { attempt } from './connection';
import { Int, JsonText, ModeC, Timestamp, decode, nullable, oneOf, rowName } from './decode';
import type { KeysetTable } from './keyset';
import { listKeyset } from './keyset';

const GrantedScopeC = oneOf<GrantedScope>([...API_SCOPES, '*'], 'GrantedScope');

const ApiKeyRow = t.type({
  id: t.string,
  org_id: t.string,
  mode: ModeC,
  name: t.string,
  prefix: t.string,
  secret_hash: t.string,
  scopes: JsonText(t.readonlyArray(GrantedScopeC)),
  created_at: Timestamp,
  revoked_at: nullable(Timestamp),
});

const COLUMNS = 'id, org_id, mode, name, prefix, secret_hash, scopes, created_at, revoked_at';
const TABLE: KeysetTable = { table: 'api_keys', columns: COLUMNS };

const toApiKey = (r: t.TypeOf<typeof ApiKeyRow>): ApiKey => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  name: r.name,
  prefix: r.prefix,
  secretHash: r.secret_hash,
  scopes: r.scopes,
  createdAt: r.created_at,
  revokedAt: r.revoked_at,
});

const toRow = (k: ApiKey) => ({
  id: k.id,
  org_id: k.orgId,
  mode: k.mode,
  name: k.name,
  prefix: k.prefix,
  secret_hash: k.secretHash,
  scopes: JSON.stringify(k.scopes),
  created_at: k.createdAt,
  revoked_at: k.revokedAt,
});

const decodeRow = (row: unknown) => pipe(decode(ApiKeyRow, rowName('api_keys', row))(row), E.map(toApiKey));

const CountRow = t.type({ n: Int });

/** The ApiKeyStore. Only `findBySecretHash` and `count` look across tenants, as the port says. */
export const sqliteApiKeys = (conn: Conn): ApiKeyStore => ({
  insert: (key) => {
    const row = toRow(key);
    return pipe(
      TE.fromEither(decode(ApiKeyRow, `new api_keys row ${key.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO api_keys (${COLUMNS}) VALUES (@id, @org_id, @mode, @name, @prefix, @secret_hash, @scopes, @created_at, @revoked_at)`,
              )
              .run(row),
          // Same id, or (astronomically unlikely) the same secret hash as an existing key.
          () => concurrentModification('api_key', key.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findBySecretHash: (secretHash) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = ?`).get(secretHash)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, undefined, decodeRow),

  revoke: (tenant, id, at) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'revocation time')(at)),
      TE.chain(() =>
        attempt(conn, (c) =>
          // `revoked_at IS NULL` keeps the first revocation time; revoking again changes nothing.
          c
            .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND org_id = ? AND mode = ? AND revoked_at IS NULL')
            .run(at, id, tenant.orgId, tenant.mode),
        ),
      ),
      TE.map(() => undefined),
    ),

  count: () =>
    pipe(
      attempt(conn, (c) => c.prepare('SELECT COUNT(*) AS n FROM api_keys').get()),
      TE.chainEitherK(decode(CountRow, 'api_keys count')),
      TE.map((r) => r.n),
    ),
});
