import type { ApiLogEntry, ApiLogStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { apiLogRow, toApiLogEntry } from '@esig/store-sql';
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const LogRow = apiLogRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, kind, method, target, status, outcome, duration_ms, key_id, oauth_client_id, created_at';
const TABLE: KeysetTable = { table: 'api_log', columns: COLUMNS, filterColumn: 'kind' };

const decodeRow = rowDecoder(LogRow, 'api_log', toApiLogEntry);

const toRow = (e: ApiLogEntry) => {
  const row = {
    id: e.id,
    org_id: e.orgId,
    mode: e.mode,
    kind: e.kind,
    method: e.method,
    target: e.target,
    status: e.status,
    outcome: e.outcome,
    duration_ms: e.durationMs,
    key_id: e.keyId,
    oauth_client_id: e.oauthClientId,
    created_at: e.createdAt,
  };
  return pipe(
    decode(LogRow, `new api_log row ${e.id}`)(row),
    E.map(() => row),
  );
};

const INSERT = `INSERT INTO api_log (${COLUMNS}) VALUES (@id, @org_id, @mode, @kind, @method, @target, @status, @outcome, @duration_ms, @key_id, @oauth_client_id, @created_at)`;

/**
 * The ApiLogStore. A batch is all or nothing: the inserts of more than one entry run in a savepoint
 * (better-sqlite3 nests `db.transaction` that way), so a taken id leaves none of the batch behind, inside a
 * transaction or not.
 */
export const sqliteApiLog = (conn: Conn): ApiLogStore => ({
  append: (entries) =>
    pipe(
      TE.fromEither(A.traverse(E.Applicative)(toRow)([...entries])),
      TE.chain((rows) => {
        // The row being inserted when the batch failed: the one whose id was taken.
        let taken = '';
        return attempt(
          conn,
          (c) => {
            const insert = c.prepare(INSERT);
            // One row needs no savepoint: a statement is atomic by itself. (A webhook delivery logs one entry,
            // and the savepoint's two statements were a sixth of what its record ran.)
            if (rows.length === 1) {
              taken = rows[0]!.id;
              insert.run(rows[0]);
              return;
            }
            c.db.transaction(() => {
              for (const row of rows) {
                taken = row.id;
                insert.run(row);
              }
            })();
          },
          () => concurrentModification('api_log_entry', taken),
        );
      }),
      TE.map(() => undefined),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.kind, decodeRow),
});
