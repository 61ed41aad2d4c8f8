import type { ApiKey, ApiKeyStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { apiKeyRow, toApiKey } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Int, Timestamp, columnCodecs, decode, rowDecoder, rowType } from './decode.js';
import type { KeyCache } from './key-cache.js';
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

const CountRow = rowType({ n: Int });

/**
 * The ApiKeyStore. Only `findBySecretHash` and `count` look across tenants, as the port says. With `keys`,
 * `findBySecretHash` answers from the cache while it is valid (bound to the read connection), and `revoke`
 * tells the cache (bound to the write connection); see key-cache.ts for why that holds across processes.
 */
export const sqliteApiKeys = (conn: Conn, keys?: { readonly cache: KeyCache; readonly role: 'read' | 'write' }): ApiKeyStore => ({
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

  findBySecretHash: (secretHash) => {
    const load = (c: Conn) => {
      const row = c.prepare(`SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = ?`).get(secretHash);
      return row === undefined ? E.right(null) : decodeRow(row);
    };
    // Inside a transaction the cache is not used: there the lookup must see the transaction's own writes.
    const cache = keys?.role === 'read' ? keys.cache : undefined;
    return pipe(
      attempt(conn, (c) => (cache === undefined ? load(c) : cache.lookup(secretHash, () => load(c)))),
      TE.chainEitherK((r) => r),
    );
  },

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
        attempt(conn, (c) => {
          if (keys?.role === 'write') keys.cache.revoking();
          // `revoked_at IS NULL` keeps the first revocation time; revoking again changes nothing.
          return c
            .prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ? AND org_id = ? AND mode = ? AND revoked_at IS NULL')
            .run(at, id, tenant.orgId, tenant.mode);
        }),
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
