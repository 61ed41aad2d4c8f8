import type { SignatureRequest, SignatureRequestStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { SignatureRequestData, checkedAggregate, consistentRequest, requestRow } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowName } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const RequestRow = requestRow(columnCodecs, SignatureRequestData);

const COLUMNS = 'id, org_id, mode, status, created_at, version, data';
const TABLE: KeysetTable = { table: 'signature_requests', columns: COLUMNS, filterColumn: 'status' };

const decodeRow = (row: unknown) => pipe(decode(RequestRow, rowName('signature_requests', row))(row), E.chain(consistentRequest));

/** The row written for an aggregate, validated with the same codec that reads it back. */
const toRow = (req: SignatureRequest) =>
  pipe(
    checkedAggregate(req),
    E.map((data) => ({
      id: data.id,
      org_id: data.orgId,
      mode: data.mode,
      status: data.status,
      created_at: data.createdAt,
      version: data.version,
      data: JSON.stringify(data),
    })),
  );

/** The SignatureRequestStore: aggregates as JSON, with optimistic concurrency on `version`. */
export const sqliteSignatureRequests = (conn: Conn): SignatureRequestStore => ({
  insert: (req) =>
    pipe(
      TE.fromEither(toRow(req)),
      TE.chain((row) =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO signature_requests (${COLUMNS}) VALUES (@id, @org_id, @mode, @status, @created_at, @version, @data)`)
              .run(row),
          () => concurrentModification('signature_request', req.id),
        ),
      ),
      TE.map(() => undefined),
    ),

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) =>
        c.prepare(`SELECT ${COLUMNS} FROM signature_requests WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode),
      ),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  // SQLite transactions are serialized (BEGIN IMMEDIATE behind one queue): the row cannot change under us.
  findByIdForUpdate: (tenant, id) =>
    pipe(
      attempt(conn, (c) =>
        c.prepare(`SELECT ${COLUMNS} FROM signature_requests WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode),
      ),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  update: (next) =>
    pipe(
      TE.fromEither(toRow(next)),
      TE.chain((row) =>
        attempt(conn, (c) =>
          // The version check and the write are one statement, so no other writer can slip in between.
          // created_at must match as well: it is the keyset position, and an aggregate never changes it.
          c
            .prepare(
              `UPDATE signature_requests SET status = @status, version = @version, data = @data
               WHERE id = @id AND org_id = @org_id AND mode = @mode AND version = @version - 1 AND created_at = @created_at`,
            )
            .run(row),
        ),
      ),
      TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('signature_request', next.id)))),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.status, decodeRow),
});
