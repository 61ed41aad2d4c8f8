import type { KeysetTable } from '@esig/store-sql';
import { keysetLists, singleFilterColumns } from '@esig/store-sql';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { run } from './connection.js';

export type { KeysetTable } from '@esig/store-sql';

/**
 * A table as the pages read it here. `idCollation`: the collation its page indexes hold `id` in, when not the
 * column's own (the indexes of documents and of signature requests hold it in "POSIX", so that only the primary key
 * can serve a lookup by id: migrations 0015 and 0017); the pages compare and sort `id` in it, or those indexes could
 * not serve them.
 */
export interface PgKeysetTable extends KeysetTable {
  readonly idCollation?: 'POSIX';
}

/**
 * The SQL of one page, with an equality test for each of `filterColumns`; parameters in this order: org,
 * mode, [filters], [created_at, id], limit. Every table has indexes `(org_id, mode, created_at, id)` and
 * `(org_id, mode, <filter>, created_at, id)`, so the row-value comparison is an index range and the
 * ORDER BY is the index order (read backwards for desc): a page costs the same whatever the table's size
 * or the cursor's depth.
 */
export const keysetSqlBy = (spec: PgKeysetTable, order: 'asc' | 'desc', filterColumns: readonly string[], positioned: boolean): string => {
  let n = 0;
  const p = () => `$${++n}`;
  const id = spec.idCollation === undefined ? 'id' : `id COLLATE "${spec.idCollation}"`;
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  const where = [
    // The tenant reaches the planner as a value it cannot see (an InitPlan), so it plans the page for a
    // tenant of average size instead of the tenant's size in the statistics. Statistics from before a
    // tenant grew (autovacuum's ANALYZE comes once a tenth of the table has changed, or never when it is
    // off) put a large tenant at about no rows; every (org_id, mode, …) index then looks alike, and once
    // the filter's index is a level deeper than the page index (about a million rows) the planner took
    // the page index and filtered the tenant's rows one by one: 1.2 s for a delivery-log page by event
    // at a million attempts, against 0.1 ms through the filter's index. Seen at its average size, the
    // tenant has rows to spare, and the index that holds the filter is the cheaper one by its estimate.
    `org_id = (SELECT ${p()}::text)`,
    `mode = (SELECT ${p()}::text)`,
    ...filterColumns.map((c) => `${c} = ${p()}`),
    // The first page is bounded too, by a sentinel no row reaches (timestamps are finite): the row comparison
    // can only be an index condition of the (…, created_at, id) index, so the planner takes it at any size.
    // Without it, on statistics from when the org was small (before autovacuum's ANALYZE caught up with a
    // growing table), it preferred another (org_id, mode, …) index and sorted the whole org: 110 ms for the
    // first page of 100 k documents against 1 ms for any later page.
    positioned
      ? `(created_at, ${id}) ${order === 'asc' ? '>' : '<'} (${p()}::timestamptz, ${p()}::text)`
      : `(created_at, ${id}) ${order === 'asc' ? `> ('-infinity'::timestamptz, '')` : `< ('infinity'::timestamptz, '')`}`,
  ];
  return `SELECT ${spec.columns} FROM ${spec.table} WHERE ${where.join(' AND ')} ORDER BY created_at ${dir}, ${id} ${dir} LIMIT ${p()}`;
};

/** The SQL of one page of a list with at most one filter, `spec.filterColumn`. */
export const keysetSql = (spec: PgKeysetTable, order: 'asc' | 'desc', filtered: boolean, positioned: boolean): string =>
  keysetSqlBy(spec, order, singleFilterColumns(spec, filtered), positioned);

const readRows = (conn: Conn, sql: string, params: readonly unknown[]) =>
  pipe(
    run(conn, 'read', sql, params),
    TE.map((r): readonly unknown[] => r.rows),
  );

export const { listKeysetBy, listKeyset } = keysetLists(keysetSqlBy, readRows);
