import type { KeysetTable } from '@esig/store-sql';
import { keysetLists, singleFilterColumns } from '@esig/store-sql';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { limitParam } from './sql-text.js';

export type { KeysetTable } from '@esig/store-sql';

/**
 * The SQL of one page, with an equality test for each of `filterColumns` (parameters in that order after
 * org and mode). Every table has indexes `(org_id, mode, created_at, id)` and
 * `(org_id, mode, <filter>, created_at, id)`, so the row-value comparison is an index range and the
 * ORDER BY is the index order: a page costs the same whatever the table's size or the cursor's depth.
 */
export const keysetSqlBy = (spec: KeysetTable, order: 'asc' | 'desc', filterColumns: readonly string[], positioned: boolean): string => {
  const dir = order === 'asc' ? 'ASC' : 'DESC';
  const where = [
    'org_id = ?',
    'mode = ?',
    ...filterColumns.map((c) => `${c} = ?`),
    ...(positioned ? [`(created_at, id) ${order === 'asc' ? '>' : '<'} (?, ?)`] : []),
  ];
  return `SELECT ${spec.columns} FROM ${spec.table} WHERE ${where.join(' AND ')} ORDER BY created_at ${dir}, id ${dir} ${limitParam('?')}`;
};

/** The SQL of one page of a list with at most one filter, `spec.filterColumn`. */
export const keysetSql = (spec: KeysetTable, order: 'asc' | 'desc', filtered: boolean, positioned: boolean): string =>
  keysetSqlBy(spec, order, singleFilterColumns(spec, filtered), positioned);

const readRows = (conn: Conn, sql: string, params: readonly unknown[]) => attempt(conn, (c): readonly unknown[] => c.prepare(sql).all(...params));

export const { listKeysetBy, listKeyset } = keysetLists(keysetSqlBy, readRows);
