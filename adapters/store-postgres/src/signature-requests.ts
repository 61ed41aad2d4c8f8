import type { SignatureRequest, SignatureRequestStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { SignatureRequestData, checkedAggregate, consistentRequest, requestRow } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { byPrimaryKeySql, tenantIs } from './by-id.js';
import { changeOne, insertOne, plannedPerCall, run, writeOne } from './connection.js';
import { columnCodecs, decode, rowName } from './decode.js';
import type { PgKeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const RequestRow = requestRow(columnCodecs, SignatureRequestData);

const COLUMNS = 'id, org_id, mode, status, created_at, version, data';
export const TABLE: PgKeysetTable = { table: 'signature_requests', columns: COLUMNS, filterColumn: 'status', idCollation: 'POSIX' };

const decodeRow = (row: unknown) => pipe(decode(RequestRow, rowName('signature_requests', row))(row), E.chain(consistentRequest));

const INSERT = insertOne(`INSERT INTO signature_requests (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb)`, 'signature_requests_insert');

// The version check and the write are one statement. A concurrent writer holding the row makes this wait
// for its end; READ COMMITTED then re-checks the WHERE on the row it committed, so the later writer finds the
// version moved on and changes nothing. created_at must match as well: it is the keyset position, and an
// aggregate never changes it. The tenant's test is one no index can take (`tenantIs`): compared with `=`, a tenant the
// statistics had not seen grow looked like a row or two, and the planner walked its range of a page index (1,683
// buffers at 100,000 requests) while holding the row. Exported for the plan test.
export const UPDATE_SQL = `UPDATE signature_requests SET status = $1, version = $2, data = $3::jsonb
  WHERE id = $4 AND ${tenantIs('$5', '$6')} AND version = $2 - 1 AND created_at = $7`;
const UPDATE = changeOne(UPDATE_SQL);

/**
 * A request by id. Only the primary key can serve `id = $1` (the page indexes hold `id` in another collation: migration
 * 0017), and the tenant's test is one no index can take (`tenantIs`), so these need no fence and keep a generic plan;
 * a plan that reads rows and filters them is priced out (see `plannedPerCall` in connection.ts). Parameters: id, org,
 * mode.
 */
export const FIND_BY_ID = plannedPerCall(
  'signature_requests_find_by_id',
  3,
  (m) => byPrimaryKeySql('signature_requests', COLUMNS, m),
);
/** The same, locked (see `byPrimaryKeySql`). */
export const FIND_BY_ID_FOR_UPDATE = plannedPerCall('signature_requests_find_by_id_for_update', 3, (m) =>
  byPrimaryKeySql('signature_requests', COLUMNS, m, { forUpdate: true }),
);

/** The aggregate checked with the codec that reads it back, and its JSON for the `data` column. */
const toData = (req: SignatureRequest) =>
  pipe(
    checkedAggregate(req),
    E.map((data) => ({ data, json: JSON.stringify(data) })),
  );

/** The SignatureRequestStore: aggregates as jsonb, with optimistic concurrency on `version`. */
export const pgSignatureRequests = (conn: Conn): SignatureRequestStore => ({
  insert: (req) => {
    const taken = () => concurrentModification('signature_request', req.id);
    return pipe(
      TE.fromEither(toData(req)),
      TE.chain(({ data, json }) =>
        writeOne(conn, INSERT, [data.id, data.orgId, data.mode, data.status, data.createdAt, data.version, json], taken),
      ),
    );
  },

  findById: (tenant, id) =>
    pipe(
      run(conn, 'read', FIND_BY_ID, [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  // The row lock lasts until the transaction ends; concurrent changes to the same request wait here.
  findByIdForUpdate: (tenant, id) =>
    pipe(
      run(conn, 'write', FIND_BY_ID_FOR_UPDATE, [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  update: (next) => {
    const stale = () => concurrentModification('signature_request', next.id);
    return pipe(
      TE.fromEither(toData(next)),
      TE.chain(({ data, json }) =>
        writeOne(conn, UPDATE, [data.status, data.version, json, data.id, data.orgId, data.mode, data.createdAt], stale),
      ),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.status, decodeRow),
});
