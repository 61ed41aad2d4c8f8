import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { ListEnvelope, PageRequest, SignatureRequest, SortOrder } from '@esig/core';
import { listDocuments, listSignatureRequests } from '@esig/core';
import {
  OTHER_TENANTS,
  T0,
  TENANT,
  baseRequest,
  collidingTimeArb,
  documentRow,
  invalidLimitArb,
  iso,
  pageSizeArb,
  requestStatusArb,
  rowIdArb,
  rowsArb,
} from './arbitraries.js';
import { harness, left, principal, right } from './support.js';

type Row = { readonly id: string; readonly createdAt: string };
const byKey = (order: SortOrder) => (a: Row, b: Row) => {
  const c = a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
  return order === 'asc' ? c : -c;
};
const orderArb = fc.constantFrom<SortOrder>('asc', 'desc');
const present = (r: Row) => r.id;

/** The exact shape of the spec's envelope: nothing more, nothing less. */
const expectEnvelopeShape = (env: ListEnvelope<string>, limit: number, order: SortOrder) => {
  expect(Object.keys(env).sort()).toEqual(['data', 'pageInfo']);
  expect(Object.keys(env.pageInfo).sort()).toEqual(['hasMore', 'limit', 'nextCursor', 'order']);
  expect(env.pageInfo.limit).toBe(limit);
  expect(env.pageInfo.order).toBe(order);
  expect(env.data.length).toBeLessThanOrEqual(limit);
  expect(env.pageInfo.nextCursor !== null).toBe(env.pageInfo.hasMore);
  if (env.pageInfo.hasMore) expect(env.data.length).toBe(limit);
};

/**
 * Fetches every page, checking each one, and returns the ids in the order visited. `between` runs after
 * each page (to insert rows while a client is paging).
 */
const walk = async (
  fetch: (page: PageRequest) => Promise<ListEnvelope<string>>,
  limit: number,
  order: SortOrder,
  maxPages: number,
  between: (pageNo: number) => Promise<void> = async () => undefined,
): Promise<string[]> => {
  const seen: string[] = [];
  let cursor: string | undefined;
  for (let pageNo = 0; ; pageNo++) {
    expect(pageNo, 'the walk does not end').toBeLessThanOrEqual(maxPages);
    const req: PageRequest = cursor === undefined ? { limit, order } : { limit, order, cursor };
    const env = await fetch(req);
    expectEnvelopeShape(env, limit, order);
    seen.push(...env.data);
    if (env.pageInfo.nextCursor === null) return seen;
    cursor = env.pageInfo.nextCursor;
    // The same cursor twice gives the same page.
    const again = await fetch({ limit, order, cursor });
    const twice = await fetch({ limit, order, cursor });
    expect(twice).toEqual(again);
    await between(pageNo);
  }
};

describe('listDocuments pagination', () => {
  it('visits every row of the tenant exactly once, in order, for any page size and either order', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb('doc', 60),
        fc.array(fc.record({ tenant: fc.constantFrom(...OTHER_TENANTS), id: rowIdArb('oth'), createdAt: collidingTimeArb }), { maxLength: 8 }),
        pageSizeArb,
        orderArb,
        async (rows, noise, limit, order) => {
          const h = harness();
          for (const r of rows) await right(h.stores.documents.insert(documentRow(r.id, r.createdAt)));
          for (const [i, n] of noise.entries()) await right(h.stores.documents.insert(documentRow(`${n.id}${i}`, n.createdAt, n.tenant)));
          const list = listDocuments({ stores: h.stores, cursors: h.cursors });
          const p = principal(['documents:read']);
          const seen = await walk((page) => right(list(p, page, {}, present)), limit, order, rows.length + 1);
          expect(seen).toEqual([...rows].sort(byKey(order)).map((r) => r.id));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('neither skips nor repeats a row when newer rows are inserted between pages', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb('doc', 40),
        fc.array(rowIdArb('new'), { maxLength: 12 }),
        fc.integer({ min: 1, max: 8 }),
        orderArb,
        async (rows, newIds, limit, order) => {
          const h = harness();
          for (const r of rows) await right(h.stores.documents.insert(documentRow(r.id, r.createdAt)));
          const list = listDocuments({ stores: h.stores, cursors: h.cursors });
          const p = principal(['documents:read']);
          // Each inserted row is newer than everything before it.
          let t = T0 + 3_600_000;
          const inserted: string[] = [];
          const seen = await walk(
            (page) => right(list(p, page, {}, present)),
            limit,
            order,
            rows.length + newIds.length + 1,
            async (pageNo) => {
              const id = newIds[pageNo];
              if (id === undefined) return;
              inserted.push(`${id}_${pageNo}`);
              await right(h.stores.documents.insert(documentRow(`${id}_${pageNo}`, iso((t += 1000)))));
            },
          );
          expect(new Set(seen).size).toBe(seen.length);
          const original = [...rows].sort(byKey(order)).map((r) => r.id);
          expect(seen.filter((id) => !inserted.includes(id))).toEqual(original);
          // Descending, newer rows lie before the cursor: never shown. Ascending, they come at the end.
          if (order === 'desc') expect(seen).toEqual(original);
          else expect(seen.slice(0, original.length)).toEqual(original);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects every limit outside 1..100 instead of clamping it', async () => {
    const h = harness();
    const list = listDocuments({ stores: h.stores, cursors: h.cursors });
    await fc.assert(
      fc.asyncProperty(invalidLimitArb, orderArb, async (limit, order) => {
        const e = await left(list(principal(), { limit, order }, {}, present));
        expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'limit' }] });
      }),
    );
    for (const limit of [0, 101, 1.5])
      expect(await left(list(principal(), { limit }, {}, present))).toMatchObject({ _tag: 'ValidationFailed' });
    // The edges are accepted.
    for (const limit of [1, 100]) expect((await right(list(principal(), { limit }, {}, present))).pageInfo.limit).toBe(limit);
    // The default applies only when no limit is given.
    expect((await right(list(principal(), {}, {}, present))).pageInfo).toEqual({ limit: 25, order: 'desc', hasMore: false, nextCursor: null });
  });

  it('refuses a cursor used with another filter or order', async () => {
    const h = harness();
    for (let i = 0; i < 5; i++) await right(h.stores.documents.insert(documentRow(`doc_${i}`, iso(T0 + i))));
    const list = listDocuments({ stores: h.stores, cursors: h.cursors });
    const first = await right(list(principal(), { limit: 2, order: 'asc' }, {}, present));
    const cursor = first.pageInfo.nextCursor!;
    expect(cursor).not.toBeNull();
    expect(E.isRight(await list(principal(), { limit: 2, order: 'asc', cursor }, {}, present)())).toBe(true);
    expect(await left(list(principal(), { limit: 2, order: 'desc', cursor }, {}, present))).toMatchObject({ _tag: 'ValidationFailed' });
    expect(await left(list(principal(), { limit: 2, order: 'asc', cursor }, { status: 'UPLOADED' }, present))).toMatchObject({
      _tag: 'ValidationFailed',
    });
  });
});

const requestRow = (id: string, createdAt: string, status: SignatureRequest['status'], tenant = TENANT): SignatureRequest =>
  baseRequest({ id, createdAt, status, orgId: tenant.orgId, mode: tenant.mode });

describe('listSignatureRequests pagination', () => {
  it('visits every matching row exactly once, in order, with and without a status filter', async () => {
    await fc.assert(
      fc.asyncProperty(
        rowsArb('req', 50).chain((rows) =>
          fc.tuple(fc.constant(rows), fc.array(requestStatusArb, { minLength: rows.length, maxLength: rows.length })),
        ),
        fc.option(requestStatusArb, { nil: undefined }),
        pageSizeArb,
        orderArb,
        async ([rows, statuses], status, limit, order) => {
          const h = harness();
          const all = rows.map((r, i) => requestRow(r.id, r.createdAt, statuses[i]!));
          for (const r of all) await right(h.stores.signatureRequests.insert(r));
          for (const t of OTHER_TENANTS) await right(h.stores.signatureRequests.insert(requestRow(`req_${t.orgId}_${t.mode}`, iso(T0), 'DRAFT', t)));
          const list = listSignatureRequests({ stores: h.stores, cursors: h.cursors });
          const p = principal(['signature_requests:read']);
          const filter = status === undefined ? {} : { status };
          const seen = await walk((page) => right(list(p, page, filter, present)), limit, order, all.length + 1);
          const expected = all.filter((r) => status === undefined || r.status === status).sort(byKey(order));
          expect(seen).toEqual(expected.map((r) => r.id));
        },
      ),
      { numRuns: 100 },
    );
  });

  it('rejects invalid limits and a cursor from another status filter', async () => {
    const h = harness();
    for (let i = 0; i < 4; i++) await right(h.stores.signatureRequests.insert(requestRow(`req_${i}`, iso(T0 + i), 'DRAFT')));
    const list = listSignatureRequests({ stores: h.stores, cursors: h.cursors });
    for (const limit of [0, 101, 1.5])
      expect(await left(list(principal(), { limit }, {}, present))).toMatchObject({
        _tag: 'ValidationFailed',
        errors: [{ path: 'limit' }],
      });
    const page = await right(list(principal(), { limit: 1 }, { status: 'DRAFT' }, present));
    const cursor = page.pageInfo.nextCursor!;
    expect(await left(list(principal(), { limit: 1, cursor }, { status: 'SENT' }, present))).toMatchObject({ _tag: 'ValidationFailed' });
    expect(await left(list(principal(), { limit: 1, cursor }, {}, present))).toMatchObject({ _tag: 'ValidationFailed' });
    // A cursor of the documents list is not one of this list, even with the same order and filter text.
    const docs = listDocuments({ stores: h.stores, cursors: h.cursors });
    for (let i = 0; i < 3; i++) await right(h.stores.documents.insert(documentRow(`doc_${i}`, iso(T0 + i))));
    const docCursor = (await right(docs(principal(), { limit: 1 }, {}, present))).pageInfo.nextCursor!;
    expect(docCursor).not.toBeNull();
    expect(await left(list(principal(), { limit: 1, cursor: docCursor }, {}, present))).toMatchObject({ _tag: 'ValidationFailed' });
  });
});
