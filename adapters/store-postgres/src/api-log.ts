import type { ApiLogStore } from '@esig/core';
import { ApiLogKindC, apiLogRow, toApiLogEntry } from '@esig/store-sql';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { prepared, writeAny } from './connection.js';
import { Int, ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const LogRow = apiLogRow(columnCodecs);

const NewEntries = t.readonlyArray(
  rowType({
    id: t.string,
    orgId: t.string,
    mode: ModeC,
    kind: ApiLogKindC,
    method: t.string,
    target: t.string,
    status: nullable(Int),
    outcome: t.string,
    durationMs: Int,
    keyId: nullable(t.string),
    oauthClientId: nullable(t.string),
    createdAt: Timestamp,
  }),
);

const COLUMNS = 'id, org_id, mode, kind, method, target, status, outcome, duration_ms, key_id, oauth_client_id, created_at';
const TABLE: KeysetTable = { table: 'api_log', columns: COLUMNS, filterColumn: 'kind' };

const decodeRow = rowDecoder(LogRow, 'api_log', toApiLogEntry);

// One array per column, so a batch of any size is one statement with a fixed text.
// Prepared: an insert from its arrays has no plan to choose (see `Prepared`).
const APPEND = prepared(
  'api_log_append',
  `INSERT INTO api_log (${COLUMNS})
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::int[], $10::text[], $11::text[], $12::timestamptz[])`,
);

/**
 * The ApiLogStore. A batch is one INSERT, so it is all or nothing; an id already taken fails it with
 * ConcurrentModification (ids are generated, so that is a fault, and like any failed statement it leaves
 * the surrounding transaction to be rolled back).
 */
export const pgApiLog = (conn: Conn): ApiLogStore => ({
  append: (entries) =>
    pipe(
      TE.fromEither(decode(NewEntries, 'new api_log rows')(entries)),
      // A taken id raises (23505), waited for or not: ConcurrentModification naming the table and its key, not
      // which entry it was.
      TE.chain((es) =>
        es.length === 0
          ? TE.right(undefined)
          : writeAny(conn, APPEND, [
              es.map((e) => e.id),
              es.map((e) => e.orgId),
              es.map((e) => e.mode),
              es.map((e) => e.kind),
              es.map((e) => e.method),
              es.map((e) => e.target),
              es.map((e) => e.status),
              es.map((e) => e.outcome),
              es.map((e) => e.durationMs),
              es.map((e) => e.keyId),
              es.map((e) => e.oauthClientId),
              es.map((e) => e.createdAt),
            ]),
      ),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.kind, decodeRow),
});
