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
  StoreError,
  StoreResult,
  Stores,
  Tenant,
  UnitOfWork,
} from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  TENANT_A,
  TENANT_A_LIVE,
  TENANT_B,
  at,
  fails,
  makeApiKey,
  makeDocument,
  makeEvent,
  makeIdempotencyRecord,
  makeOrg,
  makeSignatureRequest,
  ok,
  tagOf,
} from './builders';

export * from './builders';

/** One adapter instance with its own empty data, made fresh for every test. */
export interface StoreHarness {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  /** Releases whatever the harness holds (connections, files). */
  cleanup(): Promise<void>;
}

type Harness = () => StoreHarness;

/** The two tenants a row of TENANT_A must be invisible to: another org, and the same org's other mode. */
const STRANGERS: readonly Tenant[] = [TENANT_B, TENANT_A_LIVE];

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** A Task that yields to the event loop for `ms`, so concurrent transactions get to interleave. */
const pause = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));

const position = (a: { readonly createdAt: string; readonly id: string }): KeysetPosition => ({ createdAt: a.createdAt, id: a.id });

const byKeyset = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/**
 * Runs the store ports' contract (ports/*.ts) against an adapter: round trips, org and mode isolation,
 * keyset paging, transactions and concurrency. Every adapter (in-memory, SQLite, PostgreSQL) runs it.
 */
export const describeStoreContract = (adapterName: string, makeHarness: () => Promise<StoreHarness>): void => {
  describe(`store contract: ${adapterName}`, () => {
    let current: StoreHarness | undefined;
    beforeEach(async () => {
      current = await makeHarness();
    });
    afterEach(async () => {
      await current?.cleanup();
      current = undefined;
    });
    const h: Harness = () => {
      if (current === undefined) throw new Error('no harness: the store contract runs only inside its tests');
      return current;
    };

    documentsContract(h);
    documentContentsContract(h);
    signatureRequestsContract(h);
    apiKeysContract(h);
    orgsContract(h);
    idempotencyContract(h);
    eventsContract(h);
    pagingContract(h);
    transactionsContract(h);
  });
};

const documentsContract = (h: Harness) =>
  describe('documents', () => {
    it('round-trips every field, linked or not', async () => {
      const free = makeDocument(TENANT_A);
      const linked = makeDocument(TENANT_A_LIVE, { status: 'PENDING', signatureRequestId: 'req_X', pageCount: 1, sizeBytes: 0 });
      await ok(h().stores.documents.insert(free));
      await ok(h().stores.documents.insert(linked));
      expect(await ok(h().stores.documents.findById(TENANT_A, free.id))).toEqual(free);
      expect(await ok(h().stores.documents.findById(TENANT_A_LIVE, linked.id))).toEqual(linked);
    });

    it('finds nothing for an unknown id, another org or the other mode', async () => {
      const doc = makeDocument(TENANT_A);
      await ok(h().stores.documents.insert(doc));
      expect(await ok(h().stores.documents.findById(TENANT_A, 'doc_unknown'))).toBeNull();
      for (const t of STRANGERS) {
        expect(await ok(h().stores.documents.findById(t, doc.id))).toBeNull();
        expect(await ok(h().stores.documents.findByIds(t, [doc.id]))).toEqual([]);
      }
    });

    it('findByIds returns exactly the listed documents of the tenant', async () => {
      const [a, b, c] = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
      const other = makeDocument(TENANT_B);
      for (const d of [a, b, c, other]) await ok(h().stores.documents.insert(d));
      const found = await ok(h().stores.documents.findByIds(TENANT_A, [c.id, a.id, other.id, 'doc_unknown']));
      expect([...found].sort(byKeyset)).toEqual([a, c].sort(byKeyset));
      expect(await ok(h().stores.documents.findByIds(TENANT_A, []))).toEqual([]);
    });

    it('attachToRequest links every document; linking again to the same request is harmless', async () => {
      const docs = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
      for (const d of docs) await ok(h().stores.documents.insert(d));
      const ids = docs.map((d) => d.id);
      await ok(h().stores.documents.attachToRequest(TENANT_A, ids, 'req_1'));
      await ok(h().stores.documents.attachToRequest(TENANT_A, ids, 'req_1'));
      for (const d of await ok(h().stores.documents.findByIds(TENANT_A, ids))) expect(d.signatureRequestId).toBe('req_1');
    });

    it('attachToRequest fails with ConcurrentModification when one is linked elsewhere, and links none', async () => {
      const taken = makeDocument(TENANT_A, { signatureRequestId: 'req_1' });
      const free = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
      for (const d of [...free, taken]) await ok(h().stores.documents.insert(d));
      const e = await fails(h().stores.documents.attachToRequest(TENANT_A, [free[0]!.id, taken.id, free[1]!.id], 'req_2'));
      expect(tagOf(e)).toBe('ConcurrentModification');
      // Also inside a transaction that goes on to commit: the failed call must not have linked a part.
      const committed = await h().uow.transaction((tx) =>
        pipe(
          tx.documents.attachToRequest(TENANT_A, [free[0]!.id, taken.id], 'req_2'),
          TE.orElse((): StoreResult<void> => TE.right(undefined)),
        ),
      )();
      expect(E.isRight(committed)).toBe(true);
      for (const d of free) expect((await ok(h().stores.documents.findById(TENANT_A, d.id)))?.signatureRequestId).toBeNull();
      expect((await ok(h().stores.documents.findById(TENANT_A, taken.id)))?.signatureRequestId).toBe('req_1');
    });

    it("attachToRequest cannot reach another org's or mode's document", async () => {
      const mine = makeDocument(TENANT_A);
      await ok(h().stores.documents.insert(mine));
      for (const t of STRANGERS) {
        const theirs = makeDocument(t);
        await ok(h().stores.documents.insert(theirs));
        expect(tagOf(await fails(h().stores.documents.attachToRequest(t, [theirs.id, mine.id], 'req_9')))).toBe('ConcurrentModification');
        expect((await ok(h().stores.documents.findById(t, theirs.id)))?.signatureRequestId).toBeNull();
      }
      expect(await ok(h().stores.documents.findById(TENANT_A, mine.id))).toEqual(mine);
    });

    it("setStatusForRequest changes only that request's documents in that tenant", async () => {
      const ours = [makeDocument(TENANT_A, { signatureRequestId: 'req_1' }), makeDocument(TENANT_A, { signatureRequestId: 'req_1' })];
      const otherRequest = makeDocument(TENANT_A, { signatureRequestId: 'req_2' });
      const unlinked = makeDocument(TENANT_A);
      const strangers = STRANGERS.map((t) => makeDocument(t, { signatureRequestId: 'req_1' }));
      const untouched = [otherRequest, unlinked, ...strangers];
      for (const d of [...ours, ...untouched]) await ok(h().stores.documents.insert(d));
      await ok(h().stores.documents.setStatusForRequest(TENANT_A, 'req_1', 'PENDING'));
      for (const d of ours) expect(await ok(h().stores.documents.findById(TENANT_A, d.id))).toEqual({ ...d, status: 'PENDING' });
      for (const d of untouched) expect(await ok(h().stores.documents.findById(d, d.id))).toEqual(d);
    });
  });

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

const documentContentsContract = (h: Harness) =>
  describe('documentContents', () => {
    it('round-trips bytes exactly, including 0x00 and 0xff, as a Uint8Array', async () => {
      const bytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 7 + 255) % 256);
      expect(bytes.includes(0) && bytes.includes(0xff)).toBe(true);
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_1', bytes));
      const got = await ok(h().stores.documentContents.get(TENANT_A, 'doc_1'));
      expect(got).toBeInstanceOf(Uint8Array);
      expect(sameBytes(got!, bytes)).toBe(true);
    });

    it('round-trips a 1 MiB buffer and an empty one', async () => {
      let x = 2463534242;
      const big = Uint8Array.from({ length: 1024 * 1024 }, () => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return x & 0xff;
      });
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_big', big));
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_empty', new Uint8Array(0)));
      expect(sameBytes((await ok(h().stores.documentContents.get(TENANT_A, 'doc_big')))!, big)).toBe(true);
      expect((await ok(h().stores.documentContents.get(TENANT_A, 'doc_empty')))?.byteLength).toBe(0);
    });

    it('keeps its own copy: later changes to either buffer do not reach the store', async () => {
      const bytes = Uint8Array.from([1, 2, 3]);
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_1', bytes));
      bytes[0] = 9;
      const got = (await ok(h().stores.documentContents.get(TENANT_A, 'doc_1')))!;
      got[1] = 9;
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, 'doc_1')))!)).toEqual([1, 2, 3]);
    });

    it('put replaces the bytes of the same document', async () => {
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_1', Uint8Array.from([1])));
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_1', Uint8Array.from([2, 2])));
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, 'doc_1')))!)).toEqual([2, 2]);
    });

    it('is null for an unknown document, another org or the other mode, and tenants never overwrite each other', async () => {
      await ok(h().stores.documentContents.put(TENANT_A, 'doc_1', Uint8Array.from([1])));
      expect(await ok(h().stores.documentContents.get(TENANT_A, 'doc_2'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.documentContents.get(t, 'doc_1'))).toBeNull();
      await ok(h().stores.documentContents.put(TENANT_B, 'doc_1', Uint8Array.from([7])));
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, 'doc_1')))!)).toEqual([1]);
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_B, 'doc_1')))!)).toEqual([7]);
    });
  });

const signatureRequestsContract = (h: Harness) =>
  describe('signatureRequests', () => {
    it('round-trips the whole aggregate, nested parts and empty variants alike', async () => {
      const full = makeSignatureRequest(TENANT_A);
      const bare = makeSignatureRequest(TENANT_A_LIVE, {
        message: null,
        documentIds: [],
        recipients: [],
        fields: [],
        signingOrder: 'parallel',
        expiresAt: null,
        sentAt: null,
        declinedAt: null,
        certificateId: null,
      });
      await ok(h().stores.signatureRequests.insert(full));
      await ok(h().stores.signatureRequests.insert(bare));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, full.id))).toEqual(full);
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A_LIVE, bare.id))).toEqual(bare);
    });

    it('finds nothing for an unknown id, another org or the other mode', async () => {
      const req = makeSignatureRequest(TENANT_A);
      await ok(h().stores.signatureRequests.insert(req));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, 'req_unknown'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.signatureRequests.findById(t, req.id))).toBeNull();
    });

    it('update replaces the aggregate when the stored version is next.version - 1', async () => {
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT', version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      const next: SignatureRequest = { ...req, status: 'SENT', title: 'Renamed', recipients: req.recipients.slice(1), version: 2 };
      await ok(h().stores.signatureRequests.update(next));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(next);
    });

    it('update with a stale or skipped version fails with ConcurrentModification and writes nothing', async () => {
      const req = makeSignatureRequest(TENANT_A, { version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      const v2 = { ...req, title: 'v2', version: 2 };
      await ok(h().stores.signatureRequests.update(v2));
      for (const stale of [{ ...req, title: 'stale', version: 2 }, { ...req, title: 'skip', version: 4 }, { ...req, title: 'same', version: 1 }]) {
        expect(tagOf(await fails(h().stores.signatureRequests.update(stale)))).toBe('ConcurrentModification');
      }
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(v2);
      expect(tagOf(await fails(h().stores.signatureRequests.update({ ...req, id: 'req_unknown', version: 2 })))).toBe('ConcurrentModification');
    });

    it("update cannot reach another org's or mode's request", async () => {
      const req = makeSignatureRequest(TENANT_A, { version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      for (const t of STRANGERS) {
        const hijack = { ...req, orgId: t.orgId, mode: t.mode, title: 'hijacked', version: 2 };
        expect(tagOf(await fails(h().stores.signatureRequests.update(hijack)))).toBe('ConcurrentModification');
        expect(await ok(h().stores.signatureRequests.findById(t, req.id))).toBeNull();
      }
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(req);
    });

    it('update moves the request between status filters', async () => {
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT', version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      await ok(h().stores.signatureRequests.update({ ...req, status: 'SENT', version: 2 }));
      const page = (status: SignatureRequest['status']) =>
        ok(h().stores.signatureRequests.list(TENANT_A, { limit: 10, order: 'desc', after: null, filter: { status } }));
      expect((await page('DRAFT')).items).toEqual([]);
      expect((await page('SENT')).items.map((r) => r.id)).toEqual([req.id]);
    });
  });

const apiKeysContract = (h: Harness) =>
  describe('apiKeys', () => {
    it('round-trips every field and finds a key by secret hash across tenants, revoked or not', async () => {
      const star = makeApiKey(TENANT_A, { scopes: ['*'] });
      const revoked = makeApiKey(TENANT_B, { revokedAt: at(5), scopes: [] });
      await ok(h().stores.apiKeys.insert(star));
      await ok(h().stores.apiKeys.insert(revoked));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, star.id))).toEqual(star);
      expect(await ok(h().stores.apiKeys.findBySecretHash(star.secretHash))).toEqual(star);
      expect(await ok(h().stores.apiKeys.findBySecretHash(revoked.secretHash))).toEqual(revoked);
      expect(await ok(h().stores.apiKeys.findBySecretHash('no-such-hash'))).toBeNull();
    });

    it('refuses a second key with the same secret hash and keeps the first', async () => {
      const first = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(first));
      await fails(h().stores.apiKeys.insert(makeApiKey(TENANT_B, { secretHash: first.secretHash })));
      expect(await ok(h().stores.apiKeys.findBySecretHash(first.secretHash))).toEqual(first);
    });

    it('findById finds nothing for another org or the other mode', async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      for (const t of STRANGERS) expect(await ok(h().stores.apiKeys.findById(t, key.id))).toBeNull();
    });

    it('revoke sets revokedAt once; revoking again, or an unknown key, changes nothing', async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      await ok(h().stores.apiKeys.revoke(TENANT_A, key.id, at(10)));
      await ok(h().stores.apiKeys.revoke(TENANT_A, key.id, at(20)));
      await ok(h().stores.apiKeys.revoke(TENANT_A, 'key_unknown', at(20)));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, key.id))).toEqual({ ...key, revokedAt: at(10) });
    });

    it("revoke cannot reach another org's or mode's key", async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      for (const t of STRANGERS) await ok(h().stores.apiKeys.revoke(t, key.id, at(10)));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, key.id))).toEqual(key);
    });

    it('count counts every key of the installation, revoked included', async () => {
      expect(await ok(h().stores.apiKeys.count())).toBe(0);
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_A)));
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_A_LIVE)));
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_B, { revokedAt: at(1) })));
      expect(await ok(h().stores.apiKeys.count())).toBe(3);
    });
  });

const orgsContract = (h: Harness) =>
  describe('orgs', () => {
    it('round-trips an org and finds it by name; an unknown name is null', async () => {
      const org = makeOrg({ name: 'Acme GmbH' });
      await ok(h().stores.orgs.insert(org));
      expect(await ok(h().stores.orgs.findByName('Acme GmbH'))).toEqual(org);
      expect(await ok(h().stores.orgs.findByName('acme gmbh '))).toBeNull();
    });

    it('refuses a second org with a taken name and keeps the first', async () => {
      const org = makeOrg({ name: 'Acme' });
      await ok(h().stores.orgs.insert(org));
      await fails(h().stores.orgs.insert(makeOrg({ name: 'Acme' })));
      expect(await ok(h().stores.orgs.findByName('Acme'))).toEqual(org);
    });
  });

const idempotencyContract = (h: Harness) =>
  describe('idempotency', () => {
    const response = { status: 201, body: '{"id":"doc_1","name":"ä"}', headers: { 'content-type': 'application/json', location: '/x' } };

    it('insertIfAbsent answers true, then false without overwriting; find round-trips the record', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      expect(await ok(h().stores.idempotency.insertIfAbsent(rec))).toBe(true);
      expect(await ok(h().stores.idempotency.insertIfAbsent({ ...rec, fingerprint: 'other' }))).toBe(false);
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
      expect(await ok(h().stores.idempotency.find(TENANT_A, 'unknown'))).toBeNull();
    });

    it('of concurrent insertIfAbsent calls for one key exactly one wins', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      const results = await Promise.all(Array.from({ length: 6 }, () => ok(h().stores.idempotency.insertIfAbsent(rec))));
      expect(results.filter((x) => x)).toHaveLength(1);
    });

    it('keys are scoped to org and mode', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      for (const t of STRANGERS) {
        expect(await ok(h().stores.idempotency.find(t, rec.key))).toBeNull();
        await h().stores.idempotency.complete(t, rec.key, response)();
        await ok(h().stores.idempotency.release(t, rec.key));
        expect(await ok(h().stores.idempotency.insertIfAbsent({ ...rec, tenant: t }))).toBe(true);
      }
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
    });

    it('complete stores the response to replay and keeps the rest', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      await ok(h().stores.idempotency.complete(TENANT_A, rec.key, response));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual({ ...rec, state: 'completed', response });
    });

    it('replace swaps the whole record', async () => {
      const rec = makeIdempotencyRecord(TENANT_A, { state: 'completed', response });
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      const fresh = { ...rec, fingerprint: 'new', state: 'in_progress' as const, response: null, createdAt: at(100), lockedUntil: at(160), expiresAt: at(200) };
      await ok(h().stores.idempotency.replace(fresh));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(fresh);
    });

    it('release frees the key', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      await ok(h().stores.idempotency.release(TENANT_A, rec.key));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toBeNull();
      expect(await ok(h().stores.idempotency.insertIfAbsent(rec))).toBe(true);
    });

    it('purgeExpired deletes records expiring at or before now, in every tenant, and counts them', async () => {
      const early = makeIdempotencyRecord(TENANT_A, { expiresAt: at(10) });
      const boundary = makeIdempotencyRecord(TENANT_B, { expiresAt: at(20) });
      const late = makeIdempotencyRecord(TENANT_A_LIVE, { expiresAt: at(20.001) });
      for (const r of [early, boundary, late]) await ok(h().stores.idempotency.insertIfAbsent(r));
      expect(await ok(h().stores.idempotency.purgeExpired(at(20)))).toBe(2);
      expect(await ok(h().stores.idempotency.purgeExpired(at(20)))).toBe(0);
      expect(await ok(h().stores.idempotency.find(TENANT_A, early.key))).toBeNull();
      expect(await ok(h().stores.idempotency.find(TENANT_B, boundary.key))).toBeNull();
      expect(await ok(h().stores.idempotency.find(TENANT_A_LIVE, late.key))).toEqual(late);
    });
  });

const firstPage = (s: Stores, t: Tenant) => ok(s.events.list(t, { limit: 100, order: 'asc', after: null, filter: {} }));

const eventsContract = (h: Harness) =>
  describe('events', () => {
    it('round-trips every field, nested data and redelivery link included', async () => {
      const original = makeEvent(TENANT_A, { id: 'request.completed:req_1', type: 'request.completed', createdAt: at(1) });
      const redelivery = makeEvent(TENANT_A, { createdAt: at(2), redeliveryOf: original.id, data: {} });
      await ok(h().stores.events.append(original));
      await ok(h().stores.events.append(redelivery));
      expect((await firstPage(h().stores, TENANT_A)).items).toEqual([original, redelivery]);
    });

    it('appending an existing id fails with ConcurrentModification and the first event stays', async () => {
      const first = makeEvent(TENANT_A, { id: 'request.completed:req_1', type: 'request.completed' });
      await ok(h().stores.events.append(first));
      const again = { ...first, createdAt: at(9), data: { other: true } };
      expect(tagOf(await fails(h().stores.events.append(again)))).toBe('ConcurrentModification');
      expect((await firstPage(h().stores, TENANT_A)).items).toEqual([first]);
    });

    it("lists nothing of another org or the other mode", async () => {
      await ok(h().stores.events.append(makeEvent(TENANT_A)));
      for (const t of STRANGERS) expect(await firstPage(h().stores, t)).toEqual({ items: [], hasMore: false });
    });
  });

/** How the paging contract reaches one list. */
interface PagedList<A extends { readonly id: string; readonly createdAt: string }, F> {
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

const describePaging = <A extends { readonly id: string; readonly createdAt: string }, F>(h: Harness, spec: PagedList<A, F>) =>
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

const cycle = <T>(values: readonly T[], i: number): T => values[i % values.length]!;

const pagingContract = (h: Harness) => {
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
};

const transactionsContract = (h: Harness) =>
  describe('transactions (UnitOfWork)', () => {
    it('commits on Right and returns the value', async () => {
      const doc = makeDocument(TENANT_A);
      const r = await ok(h().uow.transaction((tx) => pipe(tx.documents.insert(doc), TE.map(() => 42))));
      expect(r).toBe(42);
      expect(await ok(h().stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    /** Writes one row to every store inside `tx`, so a rollback can be checked everywhere at once. */
    const writeEverywhere = (tx: Stores, req: SignatureRequest) => {
      const doc = makeDocument(TENANT_A);
      return pipe(
        tx.documents.insert(doc),
        TE.chain(() => tx.documents.setStatusForRequest(TENANT_A, 'req_seeded', 'CANCELLED')),
        TE.chain(() => tx.documentContents.put(TENANT_A, doc.id, Uint8Array.from([1, 2]))),
        TE.chain(() => tx.signatureRequests.update({ ...req, title: 'changed', version: req.version + 1 })),
        TE.chain(() => tx.apiKeys.insert(makeApiKey(TENANT_A))),
        TE.chain(() => tx.orgs.insert(makeOrg({ name: 'Rolled back' }))),
        TE.chain(() => tx.idempotency.insertIfAbsent(makeIdempotencyRecord(TENANT_A))),
        TE.chain(() => tx.events.append(makeEvent(TENANT_A))),
        TE.map(() => doc),
      );
    };

    const expectUntouched = async (req: SignatureRequest, seededDoc: string, docId: string) => {
      const s = h().stores;
      expect(await ok(s.documents.findById(TENANT_A, docId))).toBeNull();
      expect((await ok(s.documents.findById(TENANT_A, seededDoc)))?.status).toBe('PENDING');
      expect(await ok(s.documentContents.get(TENANT_A, docId))).toBeNull();
      expect(await ok(s.signatureRequests.findById(TENANT_A, req.id))).toEqual(req);
      expect(await ok(s.apiKeys.count())).toBe(0);
      expect(await ok(s.orgs.findByName('Rolled back'))).toBeNull();
      expect((await firstPage(s, TENANT_A)).items).toEqual([]);
    };

    const seedForRollback = async () => {
      const req = makeSignatureRequest(TENANT_A);
      const doc = makeDocument(TENANT_A, { status: 'PENDING', signatureRequestId: 'req_seeded' });
      await ok(h().stores.signatureRequests.insert(req));
      await ok(h().stores.documents.insert(doc));
      return { req, doc };
    };

    it('keeps nothing of a transaction whose work returns Left, and returns that Left', async () => {
      const { req, doc } = await seedForRollback();
      let written = '';
      const e = await fails(
        h().uow.transaction((tx) =>
          pipe(
            writeEverywhere(tx, req),
            TE.chainW((d) => {
              written = d.id;
              return TE.left({ _tag: 'Boom' as const });
            }),
          ),
        ),
      );
      expect(e).toEqual({ _tag: 'Boom' });
      await expectUntouched(req, doc.id, written);
    });

    it('keeps nothing of a transaction whose work throws or rejects, and fails with StoreFailure', async () => {
      const { req, doc } = await seedForRollback();
      const throwers: Array<(tx: Stores) => TE.TaskEither<unknown, unknown>> = [
        (tx) => async () => {
          const d = await ok(writeEverywhere(tx, req));
          throw new Error(`rejected after writing ${d.id}`);
        },
        (tx) =>
          pipe(
            writeEverywhere(tx, req),
            TE.map((d) => {
              throw new Error(`thrown after writing ${d.id}`);
            }),
          ),
        () => {
          throw new Error('thrown before returning a task');
        },
      ];
      for (const work of throwers) {
        const e = await fails(h().uow.transaction(work));
        expect(tagOf(e)).toBe('StoreFailure');
        await expectUntouched(req, doc.id, 'doc_never');
      }
    });

    it('shows its own writes to reads inside it', async () => {
      const doc = makeDocument(TENANT_A);
      const seen = await ok(
        h().uow.transaction((tx) =>
          pipe(
            tx.documents.insert(doc),
            TE.chain(() => tx.documentContents.put(TENANT_A, doc.id, Uint8Array.from([5]))),
            TE.chain(() => tx.events.append(makeEvent(TENANT_A))),
            TE.chain(() => tx.documents.findById(TENANT_A, doc.id)),
            TE.bindTo('found'),
            TE.bind('listed', () => tx.documents.list(TENANT_A, { limit: 5, order: 'desc', after: null, filter: {} })),
            TE.bind('bytes', () => tx.documentContents.get(TENANT_A, doc.id)),
            TE.bind('events', () => tx.events.list(TENANT_A, { limit: 5, order: 'desc', after: null, filter: {} })),
          ),
        ),
      );
      expect(seen.found).toEqual(doc);
      expect(seen.listed.items).toEqual([doc]);
      expect(Array.from(seen.bytes!)).toEqual([5]);
      expect(seen.events.items).toHaveLength(1);
    });

    it('hides uncommitted writes from reads outside it while it is open, and after a rollback', async () => {
      for (const outcome of ['commit', 'rollback'] as const) {
        const doc = makeDocument(TENANT_A);
        const inserted = deferred();
        const release = deferred();
        const running = h().uow.transaction((tx) =>
          pipe(
            tx.documents.insert(doc),
            TE.chainFirstTaskK(() => {
              inserted.resolve();
              return () => release.promise;
            }),
            TE.chainW(() => (outcome === 'commit' ? TE.right(undefined) : TE.left('abort'))),
          ),
        )();
        await inserted.promise;
        expect(await ok(h().stores.documents.findById(TENANT_A, doc.id))).toBeNull();
        expect((await ok(h().stores.documents.list(TENANT_A, { limit: 100, order: 'desc', after: null, filter: {} }))).items.map((d) => d.id)).not.toContain(doc.id);
        release.resolve();
        expect(E.isRight(await running)).toBe(outcome === 'commit');
        expect(await ok(h().stores.documents.findById(TENANT_A, doc.id))).toEqual(outcome === 'commit' ? doc : null);
      }
    });

    it('concurrent transactions commit or roll back independently', async () => {
      const [kept, dropped] = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
      const [a, b] = await Promise.all([
        h().uow.transaction((tx) => pipe(tx.documents.insert(dropped), TE.chainFirstTaskK(() => pause(5)), TE.chainW(() => TE.left('abort')))
        )(),
        h().uow.transaction((tx) => pipe(TE.rightTask(pause(1)), TE.chain(() => tx.documents.insert(kept))))(),
      ]);
      expect(E.isLeft(a) && E.isRight(b)).toBe(true);
      expect(await ok(h().stores.documents.findById(TENANT_A, kept.id))).toEqual(kept);
      expect(await ok(h().stores.documents.findById(TENANT_A, dropped.id))).toBeNull();
    });

    it('concurrent read-modify-write transactions never lose an update', async () => {
      const req = makeSignatureRequest(TENANT_A, { message: '0', version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      const N = 8;
      // Read, yield to the event loop (so the others run), then write back the incremented counter.
      const increment = (delayMs: number) =>
        h().uow.transaction((tx) =>
          pipe(
            tx.signatureRequests.findById(TENANT_A, req.id),
            TE.chainFirstTaskK(() => pause(delayMs)),
            TE.chainW((r): TE.TaskEither<StoreError | 'vanished', void> =>
              r === null ? TE.left('vanished') : tx.signatureRequests.update({ ...r, message: String(Number(r.message) + 1), version: r.version + 1 }),
            ),
          ),
        );
      const worker = async (i: number) => {
        for (let attempt = 0; attempt < 50; attempt++) {
          const r = await increment((i * 3 + attempt) % 4)();
          if (E.isRight(r)) return;
          // Losing the race is allowed; anything else is not.
          expect(tagOf(r.left)).toBe('ConcurrentModification');
        }
        throw new Error('an increment never got through');
      };
      await Promise.all(Array.from({ length: N }, (_, i) => worker(i)));
      const final = await ok(h().stores.signatureRequests.findById(TENANT_A, req.id));
      expect(final?.message).toBe(String(N));
      expect(final?.version).toBe(1 + N);
    });
  });
