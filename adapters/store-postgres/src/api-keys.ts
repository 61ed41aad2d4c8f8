import type { ApiKeyStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { GrantedScopeC, apiKeyRow, toApiKey } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { byIdSql } from './by-id.js';
import { prepared, run } from './connection.js';
import { Int8, ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const ApiKeyRow = apiKeyRow(columnCodecs);

/** What `insert` accepts: the port's type, checked so that it reads back the same. */
const NewApiKey = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  name: t.string,
  prefix: t.string,
  secretHash: t.string,
  scopes: t.readonlyArray(GrantedScopeC),
  createdAt: Timestamp,
  revokedAt: nullable(Timestamp),
});

export const COLUMNS = 'id, org_id, mode, name, prefix, secret_hash, scopes, created_at, revoked_at';
const TABLE: KeysetTable = { table: 'api_keys', columns: COLUMNS };

export const decodeRow = rowDecoder(ApiKeyRow, 'api_keys', toApiKey);

/** Every authenticated request runs this (where keys are not admitted by `ADMIT`): prepared, as key-admission.ts says why. */
const FIND_BY_SECRET_HASH = prepared('api_keys_by_secret_hash', `SELECT ${COLUMNS} FROM api_keys WHERE secret_hash = $1`);

const CountRow = rowType({ n: Int8 });

/** The ApiKeyStore. Only `findBySecretHash` and `count` look across tenants, as the port says. */
export const pgApiKeys = (conn: Conn): ApiKeyStore => ({
  insert: (key) => {
    // Same id, or (astronomically unlikely) the same secret hash as an existing key.
    const taken = () => concurrentModification('api_key', key.id);
    return pipe(
      TE.fromEither(decode(NewApiKey, `new api_keys row ${key.id}`)(key)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `INSERT INTO api_keys (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9) ON CONFLICT DO NOTHING`,
          [key.id, key.orgId, key.mode, key.name, key.prefix, key.secretHash, JSON.stringify(key.scopes), key.createdAt, key.revokedAt],
          taken,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
    );
  },

  findBySecretHash: (secretHash) =>
    pipe(
      run(conn, 'read', FIND_BY_SECRET_HASH, [secretHash]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  findById: (tenant, id) =>
    pipe(
      run(conn, 'read', byIdSql('api_keys', COLUMNS), [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, undefined, decodeRow),

  revoke: (tenant, id, at) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'revocation time')(at)),
      // `revoked_at IS NULL` keeps the first revocation time; revoking again changes nothing.
      TE.chain(() =>
        run(conn, 'write', 'UPDATE api_keys SET revoked_at = $1 WHERE id = $2 AND org_id = $3 AND mode = $4 AND revoked_at IS NULL', [
          at,
          id,
          tenant.orgId,
          tenant.mode,
        ]),
      ),
      TE.map(() => undefined),
    ),

  count: () =>
    pipe(
      run(conn, 'read', 'SELECT COUNT(*) AS n FROM api_keys', []),
      TE.chainEitherK(({ rows: [row] }) => decode(CountRow, 'api_keys count')(row)),
      TE.map((r) => r.n),
    ),
});
