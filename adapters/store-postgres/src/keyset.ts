import type { KeysetPage, KeysetQuery, StoreError, StoreResult, Tenant } from '@esig/core';
import { storeFailure } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { Conn } from './connection';
import { run } from './connection';
import { decodeAll } from './decode';

/** What a paged list reads: a tenant-owned table with `created_at` and `id`, and its optional filter column. */
export interface KeysetTable {
  readonly table: string;
  readonly columns: string;
  /** Column compared for equality with the filter value, when the list has a filter. */
  readonly filterColumn?: string;
}

/**
 * The SQL of one page, with an equality test for each of `filterColumns`; parameters in this order: org,
 * mode, [filters], [created_at, id], limit. Every table has indexes `(org_id, mode, created_at, id)` and
 * `(org_id, mode, <filter>, created_at, id)`, so the row-value comparison is an index range and the
 * ORDER BY is the index order (read backwards for desc): a page costs the same whatever the table's size
 * or the cursor's depth.
 */
export const keysetSqlBy = (spec: KeysetTable, order: 'asc' | 'desc', filterColumns: readonly string[], positioned: boolean): string => {
  let n = 0;
  const p = () => `$${++n}`;
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  const where = [
    `org_id = ${p()}`,
    `mode = ${p()}`,
    ...filterColumns.map((c) => `${c} = ${p()}`),
    ...(positioned ? [`(created_at, id) ${order === 'asc' ? '>' : '<'} (${p()}::timestamptz, ${p()}::text)`] : []),
  ];
  return `SELECT ${spec.columns} FROM ${spec.table} WHERE ${where.join(' AND ')} ORDER BY created_at ${dir}, id ${dir} LIMIT ${p()}`;
};

/** The SQL of one page of a list with at most one filter, `spec.filterColumn`. */
export const keysetSql = (spec: KeysetTable, order: 'asc' | 'desc', filtered: boolean, positioned: boolean): string =>
  keysetSqlBy(spec, order, filtered && spec.filterColumn !== undefined ? [spec.filterColumn] : [], positioned);

/**
 * Reads one keyset page, keeping the rows whose columns equal the given `filters` (column, value).
 * Fetches `limit + 1` rows: the extra row only tells whether another page exists, which saves a second
 * query and is exact even while rows are being inserted.
 */
export const listKeysetBy = <F, R>(
  conn: Conn,
  spec: KeysetTable,
  tenant: Tenant,
  query: KeysetQuery<F>,
  filters: ReadonlyArray<readonly [column: string, value: string]>,
  decodeRow: (row: unknown) => E.Either<StoreError, R>,
): StoreResult<KeysetPage<R>> => {
  if (!Number.isSafeInteger(query.limit) || query.limit < 1)
    return TE.left(storeFailure(new RangeError(`page limit must be a positive integer, got ${query.limit}`)));
  const sql = keysetSqlBy(
    spec,
    query.order,
    filters.map(([column]) => column),
    query.after !== null,
  );
  const params: unknown[] = [
    tenant.orgId,
    tenant.mode,
    ...filters.map(([, value]) => value),
    ...(query.after !== null ? [query.after.createdAt, query.after.id] : []),
    query.limit + 1,
  ];
  return pipe(
    run(conn, 'read', sql, params),
    TE.chainEitherK((r) =>
      pipe(
        decodeAll(decodeRow)(r.rows.slice(0, query.limit)),
        E.map((items): KeysetPage<R> => ({ items, hasMore: r.rows.length > query.limit })),
      ),
    ),
  );
};

/** Reads one keyset page of a list with at most one filter, `spec.filterColumn`, applied when `filterValue` is given. */
export const listKeyset = <F, R>(
  conn: Conn,
  spec: KeysetTable,
  tenant: Tenant,
  query: KeysetQuery<F>,
  filterValue: string | undefined,
  decodeRow: (row: unknown) => E.Either<StoreError, R>,
): StoreResult<KeysetPage<R>> =>
  listKeysetBy(conn, spec, tenant, query, filterValue !== undefined && spec.filterColumn !== undefined ? [[spec.filterColumn, filterValue]] : [], decodeRow);
