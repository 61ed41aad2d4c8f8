import type {
  ApiKey,
  Document,
  DocumentFilter,
  DomainEvent,
  EventFilter,
  KeysetPage,
  KeysetPosition,
  KeysetQuery,
  SignatureRequest,
  SignatureRequestFilter,
  StoreResult,
  StoredMail,
  Stores,
  Tenant,
} from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, at, makeApiKey, makeDocument, makeEvent, makeSignatureRequest, makeStoredMail, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS, byKeyset, position } from './harness.js';

/** How the paging contract reaches one list (the webhook lists use it too). */
export interface PagedList<A extends { readonly id: string; readonly createdAt: string }, F> {
  readonly name: string;
  /** The i-th sample row of `tenant`; `i` varies whatever the filters look at. */
  readonly make: (tenant: Tenant, createdAt: string, i: number) => A;
  readonly insert: (s: Stores, a: A) => StoreResult<void>;
  readonly list: (s: Stores, t: Tenant, q: KeysetQuery<F>) => StoreResult<KeysetPage<A>>;
  readonly all: F;
  /** Each filter with the rows it must keep; include one that keeps none. */
  readonly filters: ReadonlyArray<{ readonly filter: F; readonly keeps: (a: A) => boolean }>;
}

// Creation order, time order and id order all differ, and several rows share a createdAt, so a list
// that sorts by insertion, by id alone or by time alone comes out wrong.
const TIMES = [3, 1, 5, 2, 3, 4, 2, 5, 3, 1.5].map(at);
const INSERT_ORDER = [4, 0, 8, 2, 6, 1, 9, 7, 3, 5];

export const describePaging = <A extends { readonly id: string; readonly createdAt: string }, F>(h: Harness, spec: PagedList<A, F>) =>
  describe(`${spec.name} keyset paging`, () => {
    const seed = async (): Promise<A[]> => {
      const mine = TIMES.map((t, i) => spec.make(TENANT_A, t, i));
      const noise = STRANGERS.flatMap((tenant) => TIMES.map((t, i) => spec.make(tenant, t, i)));
      for (const i of INSERT_ORDER) await ok(spec.insert(h().stores, mine[i]!));
      for (const a of noise) await ok(spec.insert(h().stores, a));
      return mine;
    };

    /** Walks every page and checks each is exactly the next slice of `expected` with the right hasMore. */
    const walk = async (order: 'asc' | 'desc', limit: number, filter: F, between?: () => Promise<void>): Promise<A[]> => {
      const seen: A[] = [];
      let after: KeysetPosition | null = null;
      for (let pages = 1; ; pages++) {
        const page: KeysetPage<A> = await ok(spec.list(h().stores, TENANT_A, { limit, order, after, filter }));
        expect(page.items.length).toBeLessThanOrEqual(limit);
        seen.push(...page.items);
        if (!page.hasMore) return seen;
        expect(page.items.length).toBe(limit);
        after = position(page.items[page.items.length - 1]!);
        if (pages === 1) await between?.();
        if (pages > 100) throw new Error('paging does not end');
      }
    };

    const expectedOrder = (rows: A[], order: 'asc' | 'desc') => {
      const sorted = [...rows].sort(byKeyset);
      return order === 'asc' ? sorted : sorted.reverse();
    };

    it('every page size visits every row of the tenant exactly once, in order, asc and desc', async () => {
      const mine = await seed();
      for (const order of ['asc', 'desc'] as const)
        for (let limit = 1; limit <= mine.length + 1; limit++)
          expect(await walk(order, limit, spec.all), `${order}, limit ${limit}`).toEqual(expectedOrder(mine, order));
    });

    it('filters keep exactly the matching rows, in order, on every page', async () => {
      const mine = await seed();
      for (const { filter, keeps } of spec.filters)
        for (const order of ['asc', 'desc'] as const)
          for (const limit of [1, 2, 3, mine.length])
            expect(await walk(order, limit, filter), `${order}, limit ${limit}`).toEqual(expectedOrder(mine.filter(keeps), order));
    });

    it('rows inserted between page fetches neither skip nor repeat the rows already listed', async () => {
      const mine = await seed();
      const newer = (n: number) => [spec.make(TENANT_A, at(100 + n), n), spec.make(TENANT_A, at(100 + n), n + 1)];
      const later = newer(0);
      expect(await walk('desc', 3, spec.all, async () => void (await Promise.all(later.map((a) => ok(spec.insert(h().stores, a))))))).toEqual(
        expectedOrder(mine, 'desc'),
      );
      const latest = newer(10);
      expect(await walk('asc', 3, spec.all, async () => void (await Promise.all(latest.map((a) => ok(spec.insert(h().stores, a))))))).toEqual(
        expectedOrder([...mine, ...later, ...latest], 'asc'),
      );
    });

    it('an empty tenant has one empty last page', async () => {
      await seed();
      const nobody: Tenant = { orgId: 'org_NOBODY', mode: 'test' };
      expect(await ok(spec.list(h().stores, nobody, { limit: 5, order: 'desc', after: null, filter: spec.all }))).toEqual({ items: [], hasMore: false });
    });
  });

export const cycle = <T>(values: readonly T[], i: number): T => values[i % values.length]!;

export const pagingContract = (h: Harness) => {
  describePaging<Document, DocumentFilter>(h, {
    name: 'documents',
    make: (t, createdAt, i) => makeDocument(t, { createdAt, status: cycle(['UPLOADED', 'PENDING', 'COMPLETED'] as const, i) }),
    insert: (s, d) => s.documents.insert(d),
    list: (s, t, q) => s.documents.list(t, q),
    all: {},
    filters: (['UPLOADED', 'COMPLETED', 'EXPIRED'] as const).map((status) => ({ filter: { status }, keeps: (d) => d.status === status })),
  });
  describePaging<SignatureRequest, SignatureRequestFilter>(h, {
    name: 'signatureRequests',
    make: (t, createdAt, i) => makeSignatureRequest(t, { createdAt, status: cycle(['DRAFT', 'SENT', 'CANCELLED'] as const, i) }),
    insert: (s, r) => s.signatureRequests.insert(r),
    list: (s, t, q) => s.signatureRequests.list(t, q),
    all: {},
    filters: (['SENT', 'DRAFT', 'EXPIRED'] as const).map((status) => ({ filter: { status }, keeps: (r) => r.status === status })),
  });
  describePaging<DomainEvent, EventFilter>(h, {
    name: 'events',
    make: (t, createdAt, i) => makeEvent(t, { createdAt, type: cycle(['document.created', 'request.sent', 'signer.signed'] as const, i) }),
    insert: (s, e) => s.events.append(e),
    list: (s, t, q) => s.events.list(t, q),
    all: {},
    filters: (['request.sent', 'signer.signed', 'payment.paid'] as const).map((type) => ({ filter: { type }, keeps: (e) => e.type === type })),
  });
  describePaging<ApiKey, undefined>(h, {
    name: 'apiKeys',
    make: (t, createdAt) => makeApiKey(t, { createdAt }),
    insert: (s, k) => s.apiKeys.insert(k),
    list: (s, t, q) => s.apiKeys.list(t, q),
    all: undefined,
    filters: [],
  });
  describePaging<StoredMail, { readonly to?: string }>(h, {
    name: 'testMailbox',
    make: (t, createdAt, i) => makeStoredMail(t, { createdAt, to: cycle(['ana@example.com', 'bo@example.com', 'cy@example.com'] as const, i) }),
    insert: (s, m) => s.testMailbox.insert(m),
    list: (s, t, q) => s.testMailbox.list(t, q),
    all: {},
    filters: ['ana@example.com', 'cy@example.com', 'nobody@example.com'].map((to) => ({ filter: { to }, keeps: (m) => m.to === to })),
  });
};

