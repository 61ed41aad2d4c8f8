import type { KeysetQuery, StoreError, Tenant } from '@esig/core';
import { storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import type { KeysetTable } from '../src/index.js';
import { decode, keysetLists, singleFilterColumns } from '../src/index.js';

const tenant = { orgId: 'org_1', mode: 'test' } as Tenant;
const spec: KeysetTable = { table: 'documents', columns: 'id', filterColumn: 'status' };
const query = (over: Partial<KeysetQuery> = {}): KeysetQuery => ({ limit: 2, order: 'asc', after: null, filter: undefined, ...over });
const decodeRow = decode(t.type({ id: t.string }), 'documents row');

/** A fake dialect: the SQL names its inputs, and the "connection" is the rows it returns. */
const fake = (rows: readonly unknown[] | StoreError) => {
  const calls: { sql: string; params: readonly unknown[] }[] = [];
  const lists = keysetLists<'conn'>(
    (s, order, columns, positioned) => `${s.table} ${order} [${columns.join(',')}] ${positioned ? 'after' : 'first'}`,
    (_conn, sql, params) => {
      calls.push({ sql, params });
      return Array.isArray(rows) ? TE.right(rows) : TE.left(rows as StoreError);
    },
  );
  return { ...lists, calls };
};

describe('keysetLists', () => {
  it('reads limit + 1 rows and reports the extra one as hasMore', async () => {
    const f = fake([{ id: 'a' }, { id: 'b' }, { id: 'c' }]);
    expect(await f.listKeyset('conn', spec, tenant, query(), undefined, decodeRow)()).toEqual(E.right({ items: [{ id: 'a' }, { id: 'b' }], hasMore: true }));
    expect(f.calls).toEqual([{ sql: 'documents asc [] first', params: ['org_1', 'test', 3] }]);
  });

  it('says there is no more when the rows fit the page', async () => {
    const f = fake([{ id: 'a' }]);
    expect(await f.listKeyset('conn', spec, tenant, query(), undefined, decodeRow)()).toEqual(E.right({ items: [{ id: 'a' }], hasMore: false }));
  });

  it('passes org, mode, filters, position and limit in that order', async () => {
    const f = fake([]);
    const after = { createdAt: '2026-11-23T08:00:00.000Z', id: 'doc_9' };
    await f.listKeysetBy('conn', spec, tenant, query({ order: 'desc', after, limit: 5 }), [['status', 'draft'], ['kind', 'pdf']], decodeRow)();
    await f.listKeyset('conn', spec, tenant, query(), 'sent', decodeRow)();
    expect(f.calls).toEqual([
      { sql: 'documents desc [status,kind] after', params: ['org_1', 'test', 'draft', 'pdf', after.createdAt, after.id, 6] },
      { sql: 'documents asc [status] first', params: ['org_1', 'test', 'sent', 3] },
    ]);
  });

  it('ignores a filter value when the table has no filter column', async () => {
    const f = fake([]);
    await f.listKeyset('conn', { table: 'events', columns: 'id' }, tenant, query(), 'sent', decodeRow)();
    expect(f.calls[0]).toEqual({ sql: 'events asc [] first', params: ['org_1', 'test', 3] });
  });

  it.each([0, -1, 1.5, Number.NaN, 2 ** 53])('refuses limit %s without reading', async (limit) => {
    const f = fake([]);
    const r = await f.listKeyset('conn', spec, tenant, query({ limit }), undefined, decodeRow)();
    expect(E.isLeft(r) && r.left._tag === 'StoreFailure' && r.left.cause instanceof RangeError).toBe(true);
    expect(f.calls).toEqual([]);
  });

  it('fails with an undecodable row, and passes a driver failure through', async () => {
    const bad = await fake([{ id: 'a' }, { id: 7 }]).listKeyset('conn', spec, tenant, query(), undefined, decodeRow)();
    expect(E.isLeft(bad) && bad.left._tag === 'StoreFailure' && (bad.left.cause as Error).name).toBe('RowDecodeError');
    const failure = storeFailure(new Error('disk gone'));
    expect(await fake(failure).listKeyset('conn', spec, tenant, query(), undefined, decodeRow)()).toEqual(E.left(failure));
  });

  it('does not decode the extra row', async () => {
    const r = await fake([{ id: 'a' }, { id: 'b' }, { id: 3 }]).listKeyset('conn', spec, tenant, query(), undefined, decodeRow)();
    expect(r).toEqual(E.right({ items: [{ id: 'a' }, { id: 'b' }], hasMore: true }));
  });
});

describe('singleFilterColumns', () => {
  it('names the filter column only when filtered and the table has one', () => {
    expect(singleFilterColumns(spec, true)).toEqual(['status']);
    expect(singleFilterColumns(spec, false)).toEqual([]);
    expect(singleFilterColumns({ table: 'events', columns: 'id' }, true)).toEqual([]);
  });
});
