import type { ApiKey, ApiKeyStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { apiKeyRow, toApiKey } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Int, Timestamp, columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const ApiKeyRow = apiKeyRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, name, prefix, secret_hash, scopes, created_at, revoked_at';
const TABLE: KeysetTable = { table: 'api_keys', columns: COLUMNS };

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

const decodeRow = rowDecoder(ApiKeyRow, 'api_keys', toApiKey);

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
