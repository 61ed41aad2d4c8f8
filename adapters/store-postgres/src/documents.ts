import type { DocumentStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { DocumentStatusC, PageSizesC, attachPageLimit, documentRow, toDocument } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type pg from 'pg';
import { byPrimaryKeySql, tenantIs } from './by-id.js';
import type { Conn } from './connection.js';
import { expectRows, insertOne, plannedPerCall, run, write, writeAny, writeOne } from './connection.js';
import { Int, ModeC, Timestamp, columnCodecs, decode, decodeAll, nullable, rowDecoder, rowType } from './decode.js';
import type { PgKeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const DocumentRow = documentRow(columnCodecs);

const NewDocument = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  name: t.string,
  status: DocumentStatusC,
  pageCount: Int,
  pageSizes: nullable(PageSizesC),
  sizeBytes: Int,
  sha256: t.string,
  signatureRequestId: nullable(t.string),
  createdAt: Timestamp,
});

const COLUMNS = 'id, org_id, mode, name, status, page_count, page_sizes, size_bytes, sha256, signature_request_id, created_at';
// The page indexes hold `id` in "POSIX" (migration 0015): only the primary key serves a lookup by id.
export const TABLE: PgKeysetTable = { table: 'documents', columns: COLUMNS, filterColumn: 'status', idCollation: 'POSIX' };

const decodeRow = rowDecoder(DocumentRow, 'documents', toDocument);

/*
 * The listed documents are reached through the primary key alone, and only then kept when they are the
 * tenant's. Written the plain way (`WHERE org_id = $1 AND mode = $2 AND id = ANY($3)`), the planner is free
 * to read the tenant's range of an (org_id, mode, …) index and filter it by id; on a table that has grown
 * without ANALYZE (autovacuum off or not yet round) it believes `org_id = $1 AND mode = $2` matches a row or
 * two, and reads the org's every document per request: create-request then costs O(documents in the org).
 * So the tenant is compared with `IS NOT DISTINCT FROM`, which no index can serve (for these NOT NULL
 * columns it means `=`): the ids are the only condition an index can take, and by primary key it is at most
 * one row per listed id, whatever the statistics say.
 *
 * These statements are kept off generic plans that scan (see `plannedPerCall` in connection.ts). They used to fence the ids
 * in MATERIALIZED CTEs instead, one scan of the table per CTE: the same rows, but planning three scans of a
 * table with four indexes cost 250 µs of a backend's CPU per create-request, more than running them. One
 * scan plans in about a third of that.
 */
const TENANT = tenantIs('$1', '$2');

/** The tenant's documents among the listed ids. Parameters: org, mode, ids. */
export const FIND_BY_IDS = plannedPerCall('documents_find_by_ids', 3, (m) => `SELECT ${COLUMNS} FROM documents WHERE id = ANY($3::text[]) AND ${TENANT} AND ${m}`);

/** The listed documents of the tenant that are free, or already this request's. */
const ATTACHABLE = `id = ANY($3::text[]) AND ${TENANT} AND (signature_request_id IS NULL OR signature_request_id = $4)`;

/**
 * The attachable documents counted, or -1 when they have more pages together than the limit ($6): a count
 * that can never be all of them, so the statements below link none.
 */
const COUNTED_WITHIN_PAGES = 'CASE WHEN SUM(page_count) <= $6 THEN COUNT(*) ELSE -1 END';

/**
 * Links the listed documents of the tenant to a request in one statement, all or none. `attachable` locks
 * every one of them that is free (or already this request's) and counts them; the UPDATE writes only when
 * the count is all of them and their pages are within the limit. Under READ COMMITTED a document another
 * transaction is linking concurrently is re-checked once that transaction ends, so it drops out if it went
 * elsewhere. Parameters: org, mode, ids, request id, number of distinct ids, the most pages.
 */
export const ATTACH = plannedPerCall(
  'documents_attach',
  6,
  (m) => `
  WITH attachable AS MATERIALIZED (SELECT id, page_count FROM documents WHERE ${ATTACHABLE} FOR UPDATE)
  UPDATE documents SET signature_request_id = $4
  WHERE id = ANY($3::text[]) AND id IN (SELECT id FROM attachable)
    AND (SELECT ${COUNTED_WITHIN_PAGES} FROM attachable) = $5 AND ${m}`,
);
/**
 * ATTACH sent unanswered (see `write`): linking fewer than all the documents, or documents with too many pages,
 * raises (EW001), and the transaction commits none of them, so one UPDATE does. The UPDATE re-checks its
 * condition on a row another transaction changed meanwhile, as the lock above does. (As `expectRows`, with
 * the pages counted too.)
 */
export const ATTACH_RAISING = plannedPerCall(
  'documents_attach_raising',
  6,
  (m) =>
    `WITH changed AS (UPDATE documents SET signature_request_id = $4 WHERE ${ATTACHABLE} RETURNING page_count) ` +
    `SELECT esig_expect_rows((SELECT ${COUNTED_WITHIN_PAGES} FROM changed), $5) WHERE ${m}`,
);

/*
 * One listed document, as most create-requests list: statements of their own that keep a generic plan, where the
 * list's forms are planned at every call (about 140 µs of a backend's CPU each under load: docs/performance.md,
 * twenty-eighth round). PostgreSQL plans `id = ANY($3)` for ten ids and so never keeps that plan.
 *
 * A generic plan is safe here because only the primary key can serve `id = $3`: the page indexes hold `id` in
 * another collation (migration 0015), the tenant is compared by `IS NOT DISTINCT FROM`, and the attach's test of
 * the request is a COALESCE, none of which an index can take. Any other plan reads rows and filters them, which
 * the marker prices out (see `plannedPerCall`); the plan cache test checks that these keep a generic plan and read
 * one row whatever the table held when it was analyzed. Parameters: org, mode, id[, request id].
 */
export const FIND_ONE = plannedPerCall('documents_find_one', 3, (m) => `SELECT ${COLUMNS} FROM documents WHERE id = $3 AND ${TENANT} AND ${m}`);
/**
 * One UPDATE: under READ COMMITTED it tests its condition again on a row another transaction changed meanwhile.
 * Parameters: org, mode, id, request id, the most pages.
 */
const ATTACH_ONE_SQL = (m: string) =>
  `UPDATE documents SET signature_request_id = $4 WHERE id = $3 AND ${TENANT} AND COALESCE(signature_request_id, $4) = $4 AND page_count <= $5 AND ${m}`;
export const ATTACH_ONE = plannedPerCall('documents_attach_one', 5, ATTACH_ONE_SQL);
/** ATTACH_ONE sent unanswered: the marker only in the UPDATE's WHERE (see `changeOnePlannedPerCall`'s `keyIndexOnly`). */
export const ATTACH_ONE_RAISING = plannedPerCall('documents_attach_one_raising', 5, (m) => expectRows(ATTACH_ONE_SQL(m), 1));

/**
 * A document by id (its page, its content, the signing flow's reads). Only the primary key can serve `id = $1` (see
 * FIND_ONE), so it needs no fence (by-id.ts) and keeps a generic plan. Parameters: id, org, mode.
 */
export const FIND_BY_ID = plannedPerCall(
  'documents_find_by_id',
  3,
  (m) => byPrimaryKeySql('documents', COLUMNS, m),
);

/** No limit on the pages: as many as a document's page count (an integer column) can hold. */
const ANY_PAGES = 2_147_483_647;

/** The DocumentStore over the pool or one transaction's client. */

/**
 * The status of a request's documents, found through the primary key by the ids the request lists: no index holds
 * `signature_request_id` (migration 0016), so that linking a document touches no index, a HOT update at about half
 * the cost (docs/performance.md, twenty-eighth and twenty-ninth rounds). The tenant is compared by
 * `IS NOT DISTINCT FROM`, so no (org_id, mode, …) index is offered: with statistics from before a tenant grew, its
 * equality estimates about no rows, and the planner took such an index and read the tenant's every row. Planned at
 * each call, for the table's real size. Parameters: status, org, mode, request id, document ids.
 * Exported for the plan test.
 */
export const SET_STATUS_FOR_REQUEST_SQL = `UPDATE documents SET status = $1
  WHERE id = ANY($5::text[]) AND ${tenantIs('$2', '$3')} AND signature_request_id = $4`;

const INSERT = insertOne(`INSERT INTO documents (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`);

export const pgDocuments = (conn: Conn): DocumentStore => ({
  insert: (doc) => {
    const taken = () => concurrentModification('document', doc.id);
    return pipe(
      // Validate on the way in as on the way out: whatever is written can be read back.
      TE.fromEither(decode(NewDocument, `new documents row ${doc.id}`)(doc)),
      TE.chain(() =>
        writeOne(
          conn,
          INSERT,
          [doc.id, doc.orgId, doc.mode, doc.name, doc.status, doc.pageCount, doc.pageSizes === null ? null : JSON.stringify(doc.pageSizes), doc.sizeBytes, doc.sha256, doc.signatureRequestId, doc.createdAt],
          taken,
        ),
      ),
    );
  },

  findById: (tenant, id) =>
    pipe(
      run(conn, 'read', FIND_BY_ID, [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  findByIds: (tenant, ids) => {
    if (ids.length === 0) return TE.right([]);
    const unique = [...new Set(ids)];
    return pipe(
      unique.length === 1 ? run(conn, 'read', FIND_ONE, [tenant.orgId, tenant.mode, unique[0]]) : run(conn, 'read', FIND_BY_IDS, [tenant.orgId, tenant.mode, unique]),
      TE.chainEitherK((r) => decodeAll(decodeRow)(r.rows)),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.status, decodeRow),

  attachToRequest: (tenant, ids, requestId, limits) => {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return TE.right(undefined);
    // Some document is linked to another request, or is not in this tenant at all, or they have too many pages:
    // a refusal (the unread create-request then reads to say which). A lock not had (55P03, 40P01, 40001) is a
    // lost race of another kind, which reading again would only wait for once more.
    const refused = () => concurrentModification('document', unique.join(','));
    const conflict = (code: string) => (code === 'EW001' ? refused() : concurrentModification('row', code));
    const linked = (r: pg.QueryResult) => (r.rowCount === unique.length ? null : refused());
    const maxPages = attachPageLimit(limits, ANY_PAGES);
    return unique.length === 1
      ? write(conn, ATTACH_ONE, [tenant.orgId, tenant.mode, unique[0], requestId, maxPages], linked, conflict, ATTACH_ONE_RAISING)
      : write(conn, ATTACH, [tenant.orgId, tenant.mode, unique, requestId, unique.length, maxPages], linked, conflict, ATTACH_RAISING);
  },

  setStatusForRequest: (tenant, request, status) =>
    pipe(
      TE.fromEither(decode(DocumentStatusC, 'document status')(status)),
      TE.chain(() => writeAny(conn, SET_STATUS_FOR_REQUEST_SQL, [status, tenant.orgId, tenant.mode, request.id, [...request.documentIds]])),
    ),
});
