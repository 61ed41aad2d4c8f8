import type { KeysetPage, KeysetQuery, StoreError, StoreResult, Tenant } from '@esig/core';
import { storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { decodeAll } from './decode.js';

/** What a paged list reads: a tenant-owned table with `created_at` and `id`, and its optional filter column. */
export interface KeysetTable {
  readonly table: string;
  readonly columns: string;
  /** Column compared for equality with the filter value, when the list has a filter. */
  readonly filterColumn?: string;
}

/** Equality filters of a page: (column, value). */
export type KeysetFilters = ReadonlyArray<readonly [column: string, value: string]>;

/**
 * A dialect's SQL of one page: an equality test for each of `filterColumns`, parameters in this order:
 * org, mode, [filters], [created_at, id] when `positioned`, limit.
 */
export type KeysetSqlBy = (spec: KeysetTable, order: 'asc' | 'desc', filterColumns: readonly string[], positioned: boolean) => string;

/** Runs one read statement on a dialect's connection, yielding its rows. */
export type ReadRows<C> = (conn: C, sql: string, params: readonly unknown[]) => StoreResult<readonly unknown[]>;

/** The filter columns of a list with at most one filter, `spec.filterColumn`. */
export const singleFilterColumns = (spec: KeysetTable, filtered: boolean): readonly string[] =>
  filtered && spec.filterColumn !== undefined ? [spec.filterColumn] : [];

/**
 * Both adapters' paged reads, given the dialect's SQL and driver call. Every page fetches `limit + 1`
 * rows: the extra row only tells whether another page exists, which saves a second query and is exact
 * even while rows are being inserted.
 */
export const keysetLists = <C>(sqlBy: KeysetSqlBy, readRows: ReadRows<C>) => {
  /** Reads one keyset page, keeping the rows whose columns equal the given `filters`. */
  const listKeysetBy = <F, R>(
    conn: C,
    spec: KeysetTable,
    tenant: Tenant,
    query: KeysetQuery<F>,
    filters: KeysetFilters,
    decodeRow: (row: unknown) => E.Either<StoreError, R>,
  ): StoreResult<KeysetPage<R>> => {
    if (!Number.isSafeInteger(query.limit) || query.limit < 1)
      return TE.left(storeFailure(new RangeError(`page limit must be a positive integer, got ${query.limit}`)));
    const sql = sqlBy(
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
      readRows(conn, sql, params),
      TE.chainEitherK((rows) =>
        pipe(
          decodeAll(decodeRow)(rows.slice(0, query.limit)),
          E.map((items): KeysetPage<R> => ({ items, hasMore: rows.length > query.limit })),
        ),
      ),
    );
  };

  /** Reads one keyset page of a list with at most one filter, `spec.filterColumn`, applied when `filterValue` is given. */
  const listKeyset = <F, R>(
    conn: C,
    spec: KeysetTable,
    tenant: Tenant,
    query: KeysetQuery<F>,
    filterValue: string | undefined,
    decodeRow: (row: unknown) => E.Either<StoreError, R>,
  ): StoreResult<KeysetPage<R>> =>
    listKeysetBy(conn, spec, tenant, query, filterValue !== undefined && spec.filterColumn !== undefined ? [[spec.filterColumn, filterValue]] : [], decodeRow);

  return { listKeysetBy, listKeyset };
};
