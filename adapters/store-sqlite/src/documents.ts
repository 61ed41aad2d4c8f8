import type { Document, DocumentStore, Tenant } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { DocumentStatusC, attachPageLimit, documentRow, toDocument } from '@esig/store-sql';
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';
import { bySize, placeholders } from './sql-text.js';

const DocumentRow = documentRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, name, status, page_count, page_sizes, size_bytes, sha256, signature_request_id, created_at';
const TABLE: KeysetTable = { table: 'documents', columns: COLUMNS, filterColumn: 'status' };

const toRow = (d: Document) => ({
  id: d.id,
  org_id: d.orgId,
  mode: d.mode,
  name: d.name,
  status: d.status,
  page_count: d.pageCount,
  page_sizes: d.pageSizes === null ? null : JSON.stringify(d.pageSizes),
  size_bytes: d.sizeBytes,
  sha256: d.sha256,
  signature_request_id: d.signatureRequestId,
  created_at: d.createdAt,
});

const decodeRow = rowDecoder(DocumentRow, 'documents', toDocument);

/** The DocumentStore over one SQLite connection (the read connection, or a transaction's). */
/*
 * The listed documents are reached through the primary key. Without ANALYZE statistics (esig never runs
 * it), SQLite's planner reads `org_id = ? AND mode = ? AND id IN (…3 ids…)` through documents_by_request's
 * (org_id, mode) range instead, that is the org's every document, once a request lists more than one. The
 * unary `+` keeps org_id and mode out of any index (SQLite's documented way to do so), so the only index
 * left is the primary key; they are still checked on every row found.
 */

/** The tenant's documents among `n` listed ids. Parameters: org, mode, the ids. */
export const findByIdsSql = bySize((n: number): string => `SELECT ${COLUMNS} FROM documents WHERE +org_id = ? AND +mode = ? AND id IN (${placeholders(n)})`);

/**
 * Links `n` listed documents of the tenant to a request, every one or none: the subquery counts the
 * attachable ones first, and counts none (-1) when they have more pages together than the limit. Without it
 * a conflict would leave some documents attached if the caller went on to commit. By primary key, as above.
 * Parameters: request id, org, mode, the ids, request id, the most pages, org, mode, the ids, request id, n.
 */
export const attachSql = bySize((n: number): string => {
  const inList = placeholders(n);
  const free = '(signature_request_id IS NULL OR signature_request_id = ?)';
  return (
    `UPDATE documents SET signature_request_id = ? WHERE +org_id = ? AND +mode = ? AND id IN (${inList}) AND ${free} ` +
    `AND (SELECT CASE WHEN SUM(page_count) <= ? THEN COUNT(*) ELSE -1 END ` +
    `FROM documents WHERE +org_id = ? AND +mode = ? AND id IN (${inList}) AND ${free}) = ?`
  );
});

/** No limit on the pages: more than a document's page count can hold. */
const ANY_PAGES = Number.MAX_SAFE_INTEGER;

export const sqliteDocuments = (conn: Conn): DocumentStore => ({
  insert: (doc) => {
    const row = toRow(doc);
    return pipe(
      // Validate on the way in as on the way out: whatever is written can be read back.
      TE.fromEither(decode(DocumentRow, `new documents row ${doc.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO documents (${COLUMNS}) VALUES (@id, @org_id, @mode, @name, @status, @page_count, @page_sizes, @size_bytes, @sha256, @signature_request_id, @created_at)`,
              )
              .run(row),
          () => concurrentModification('document', doc.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM documents WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  findByIds: (tenant, ids) => {
    if (ids.length === 0) return TE.right([]);
    const unique = [...new Set(ids)];
    return pipe(
      attempt(conn, (c) =>
        // One statement per distinct list length; requests carry at most a few dozen documents.
        c
          .prepare(findByIdsSql(unique.length))
          .all(tenant.orgId, tenant.mode, ...unique),
      ),
      TE.chainEitherK(A.traverse(E.Applicative)(decodeRow)),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.status, decodeRow),

  attachToRequest: (tenant, ids, requestId, limits) => {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return TE.right(undefined);
    const sql = attachSql(unique.length);
    const scope = (t: Tenant) => [t.orgId, t.mode];
    const maxPages = attachPageLimit(limits, ANY_PAGES);
    return pipe(
      attempt(conn, (c) =>
        c.prepare(sql).run(requestId, ...scope(tenant), ...unique, requestId, maxPages, ...scope(tenant), ...unique, requestId, unique.length),
      ),
      TE.chain((r) =>
        r.changes === unique.length
          ? TE.right(undefined)
          : // Some document is linked to another request, or is not in this tenant at all, or they have too many pages.
            TE.left(concurrentModification('document', unique.join(','))),
      ),
    );
  },

  setStatusForRequest: (tenant, request, status) =>
    pipe(
      TE.fromEither(decode(DocumentStatusC, 'document status')(status)),
      TE.chain(() =>
        attempt(conn, (c) =>
          c
            .prepare('UPDATE documents SET status = ? WHERE id IN (SELECT value FROM json_each(?)) AND org_id = ? AND mode = ? AND signature_request_id = ?')
            .run(status, JSON.stringify(request.documentIds), tenant.orgId, tenant.mode, request.id),
        ),
      ),
      TE.map(() => undefined),
    ),
});

