import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { ContentKey, StoreResult } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, fails, makeDocument, ok, tagOf } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS, byKeyset, sameBytes } from './harness.js';

export const documentsContract = (h: Harness) =>
  describe('documents', () => {
    it('round-trips every field, linked or not', async () => {
      const free = makeDocument(TENANT_A);
      const linked = makeDocument(TENANT_A_LIVE, { status: 'PENDING', signatureRequestId: 'req_X', pageCount: 1, pageSizes: [{ width: 0.5, height: 14_400 }], sizeBytes: 0 });
      // Uploaded before page sizes were recorded.
      const legacy = makeDocument(TENANT_A, { pageSizes: null });
      for (const d of [free, linked, legacy]) await ok(h().stores.documents.insert(d));
      expect(await ok(h().stores.documents.findById(TENANT_A, free.id))).toEqual(free);
      expect(await ok(h().stores.documents.findById(TENANT_A_LIVE, linked.id))).toEqual(linked);
      expect(await ok(h().stores.documents.findById(TENANT_A, legacy.id))).toEqual(legacy);
      expect(await ok(h().stores.documents.findByIds(TENANT_A, [free.id, legacy.id]))).toEqual(expect.arrayContaining([free, legacy]));
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

    // One document, the usual request's: the same rules as several, whatever statements a store runs for it.
    it('one listed document, listed once or twice: found, linked, linked again harmlessly; elsewhere, unknown or a stranger\'s, it fails and links nothing', async () => {
      const [doc, taken] = [makeDocument(TENANT_A), makeDocument(TENANT_A, { signatureRequestId: 'req_1' })];
      for (const d of [doc, taken]) await ok(h().stores.documents.insert(d));
      expect(await ok(h().stores.documents.findByIds(TENANT_A, [doc.id, doc.id]))).toEqual([doc]);
      for (const t of STRANGERS) {
        expect(await ok(h().stores.documents.findByIds(t, [doc.id]))).toEqual([]);
        expect(tagOf(await fails(h().stores.documents.attachToRequest(t, [doc.id], 'req_9')))).toBe('ConcurrentModification');
      }
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, ['doc_unknown'], 'req_2')))).toBe('ConcurrentModification');
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, [taken.id], 'req_2')))).toBe('ConcurrentModification');
      // Inside a transaction whose writes go unanswered until its COMMIT, the failure is the transaction's.
      expect(tagOf(await fails(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [taken.id], 'req_2'), { deferWrites: true })))).toBe(
        'ConcurrentModification',
      );
      expect((await ok(h().stores.documents.findById(TENANT_A, taken.id)))?.signatureRequestId).toBe('req_1');
      expect((await ok(h().stores.documents.findById(TENANT_A, doc.id)))?.signatureRequestId).toBeNull();
      await ok(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [doc.id, doc.id], 'req_2'), { deferWrites: true }));
      await ok(h().stores.documents.attachToRequest(TENANT_A, [doc.id], 'req_2'));
      expect((await ok(h().stores.documents.findById(TENANT_A, doc.id)))?.signatureRequestId).toBe('req_2');
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, [doc.id], 'req_3')))).toBe('ConcurrentModification');
    });

    // create-request's unread form relies on the store alone to refuse documents with too many pages.
    it('attachToRequest with a page limit links documents within it, one or several, and refuses more, linking none', async () => {
      const [a, b, c] = [makeDocument(TENANT_A, { pageCount: 3 }), makeDocument(TENANT_A, { pageCount: 4 }), makeDocument(TENANT_A, { pageCount: 8 })];
      for (const d of [a, b, c]) await ok(h().stores.documents.insert(d));
      const linkedTo = async (d: { readonly id: string }) => (await ok(h().stores.documents.findById(TENANT_A, d.id)))?.signatureRequestId;
      // Several, one page over: answered, and sent unanswered in a transaction that commits.
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, [a.id, b.id], 'req_1', { maxPages: 6 })))).toBe('ConcurrentModification');
      expect(
        tagOf(await fails(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [a.id, b.id], 'req_1', { maxPages: 6 }), { deferWrites: true }))),
      ).toBe('ConcurrentModification');
      // One, one page over, both ways.
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, [c.id], 'req_2', { maxPages: 7 })))).toBe('ConcurrentModification');
      expect(tagOf(await fails(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [c.id], 'req_2', { maxPages: 7 }), { deferWrites: true })))).toBe(
        'ConcurrentModification',
      );
      for (const d of [a, b, c]) expect(await linkedTo(d)).toBeNull();
      // Exactly at the limit: linked.
      await ok(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [a.id, b.id], 'req_1', { maxPages: 7 }), { deferWrites: true }));
      await ok(h().stores.documents.attachToRequest(TENANT_A, [c.id], 'req_2', { maxPages: 8 }));
      expect([await linkedTo(a), await linkedTo(b), await linkedTo(c)]).toEqual(['req_1', 'req_1', 'req_2']);
    });

    // A limit is configuration (ESIG_MAX_PAGES_PER_REQUEST, an embedder's PageLimits): whatever number it is, the
    // store answers as the core's own check of it would, never with a failure of its own.
    it('attachToRequest with a page limit of any size: a fraction counts its whole pages, a huge or infinite one none', async () => {
      const docs = [makeDocument(TENANT_A, { pageCount: 3 }), makeDocument(TENANT_A, { pageCount: 4 })];
      for (const d of docs) await ok(h().stores.documents.insert(d));
      const ids = docs.map((d) => d.id);
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, ids, 'req_1', { maxPages: 6.9 })))).toBe('ConcurrentModification');
      expect(tagOf(await fails(h().stores.documents.attachToRequest(TENANT_A, [ids[1]!], 'req_1', { maxPages: 3.5 })))).toBe('ConcurrentModification');
      for (const maxPages of [7.5, 2 ** 31, 2 ** 53, Infinity]) {
        const [one, two, three] = [makeDocument(TENANT_A, { pageCount: 3 }), makeDocument(TENANT_A, { pageCount: 4 }), makeDocument(TENANT_A, { pageCount: 5 })];
        for (const d of [one, two, three]) await ok(h().stores.documents.insert(d));
        const req = `req_${maxPages}`;
        await ok(h().uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [one.id, two.id], req, { maxPages }), { deferWrites: true }));
        await ok(h().stores.documents.attachToRequest(TENANT_A, [three.id], req, { maxPages }));
        for (const d of [one, two, three]) expect((await ok(h().stores.documents.findById(TENANT_A, d.id)))?.signatureRequestId).toBe(req);
      }
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
      // Linked to the request but not among those it lists (the request names its documents).
      const unlisted = makeDocument(TENANT_A, { signatureRequestId: 'req_1' });
      const untouched = [otherRequest, unlinked, ...strangers, unlisted];
      for (const d of [...ours, ...untouched]) await ok(h().stores.documents.insert(d));
      // Every id listed but the unlisted one's, even those of other requests, tenants or none: only ours change.
      const listed = [...ours, otherRequest, unlinked, ...strangers].map((d) => d.id);
      await ok(h().stores.documents.setStatusForRequest(TENANT_A, { id: 'req_1', documentIds: listed }, 'PENDING'));
      for (const d of ours) expect(await ok(h().stores.documents.findById(TENANT_A, d.id))).toEqual({ ...d, status: 'PENDING' });
      for (const d of untouched) expect(await ok(h().stores.documents.findById(d, d.id))).toEqual(d);
    });
  });

const upload = (documentId: string): ContentKey => ({ kind: 'upload', documentId });

export const documentContentsContract = (h: Harness) =>
  describe('documentContents', () => {
    it('round-trips bytes exactly, including 0x00 and 0xff, as a Uint8Array', async () => {
      const bytes = Uint8Array.from({ length: 512 }, (_, i) => (i * 7 + 255) % 256);
      expect(bytes.includes(0) && bytes.includes(0xff)).toBe(true);
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), bytes));
      const got = await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1')));
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
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_big'), big));
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_empty'), new Uint8Array(0)));
      expect(sameBytes((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_big'))))!, big)).toBe(true);
      expect((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_empty'))))?.byteLength).toBe(0);
    });

    it('keeps its own copy: later changes to either buffer do not reach the store', async () => {
      const bytes = Uint8Array.from([1, 2, 3]);
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), bytes));
      bytes[0] = 9;
      const got = (await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1'))))!;
      got[1] = 9;
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1'))))!)).toEqual([1, 2, 3]);
    });

    it('put replaces the bytes of the same document', async () => {
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), Uint8Array.from([1])));
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), Uint8Array.from([2, 2])));
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1'))))!)).toEqual([2, 2]);
    });

    it('is null for an unknown document, another org or the other mode, and tenants never overwrite each other', async () => {
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), Uint8Array.from([1])));
      expect(await ok(h().stores.documentContents.get(TENANT_A, upload('doc_2')))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.documentContents.get(t, upload('doc_1')))).toBeNull();
      await ok(h().stores.documentContents.put(TENANT_B, upload('doc_1'), Uint8Array.from([7])));
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1'))))!)).toEqual([1]);
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_B, upload('doc_1'))))!)).toEqual([7]);
    });

    it('keeps a request’s finished PDF and certificate apart from each other and from every upload', async () => {
      // The seal job stores both artifacts of a request; a store that names only uploads fails here.
      const req = 'req_01KAAAAAAAAAAAAAAAAAAAAAAA';
      const keys: ContentKey[] = [upload('doc_01KAAAAAAAAAAAAAAAAAAAAAAA'), { kind: 'finished', requestId: req }, { kind: 'certificate', requestId: req }];
      for (const [i, k] of keys.entries()) await ok(h().stores.documentContents.put(TENANT_A, k, Uint8Array.from([i + 1])));
      for (const [i, k] of keys.entries()) expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, k)))!), k.kind).toEqual([i + 1]);
      expect(await ok(h().stores.documentContents.get(TENANT_A, { kind: 'finished', requestId: 'req_01KBBBBBBBBBBBBBBBBBBBBBBB' }))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.documentContents.get(t, { kind: 'certificate', requestId: req }))).toBeNull();
    });

    // Staged content: written ahead of the transaction that stores it under a key (on SQLite, in pieces).
    const xorshift = (length: number) => {
      let x = 2463534242;
      return Uint8Array.from({ length }, () => {
        x ^= x << 13;
        x ^= x >>> 17;
        x ^= x << 5;
        return x & 0xff;
      });
    };

    it('stage, then put in a transaction: get answers exactly the staged bytes (empty, 512 bytes, 1 MiB)', async () => {
      const exact = Uint8Array.from({ length: 512 }, (_, i) => (i * 7 + 255) % 256);
      const cases = [new Uint8Array(0), exact, xorshift(1024 * 1024)];
      for (const [i, bytes] of cases.entries()) {
        const staged = await ok(h().stores.documentContents.stage(TENANT_A, bytes));
        expect(await ok(h().stores.documentContents.get(TENANT_A, upload(`doc_${i}`)))).toBeNull();
        await ok(h().uow.transaction((tx) => tx.documentContents.put(TENANT_A, upload(`doc_${i}`), staged)));
        const got = await ok(h().stores.documentContents.get(TENANT_A, upload(`doc_${i}`)));
        expect(got).toBeInstanceOf(Uint8Array);
        expect(sameBytes(got!, bytes), `case ${i}`).toBe(true);
      }
    });

    it('staged content is a copy: changing the buffer once stage has answered does not reach the store', async () => {
      const bytes = Uint8Array.from([1, 2, 3]);
      const staged = await ok(h().stores.documentContents.stage(TENANT_A, bytes));
      bytes[0] = 9;
      await ok(h().stores.documentContents.put(TENANT_A, upload('doc_1'), staged));
      expect(Array.from((await ok(h().stores.documentContents.get(TENANT_A, upload('doc_1'))))!)).toEqual([1, 2, 3]);
    });

    it('staged and plain bytes replace each other under a key', async () => {
      const dc = () => h().stores.documentContents;
      await ok(dc().put(TENANT_A, upload('doc_1'), Uint8Array.from([1])));
      await ok(dc().put(TENANT_A, upload('doc_1'), await ok(dc().stage(TENANT_A, Uint8Array.from([2, 2])))));
      expect(Array.from((await ok(dc().get(TENANT_A, upload('doc_1'))))!)).toEqual([2, 2]);
      await ok(dc().put(TENANT_A, upload('doc_1'), await ok(dc().stage(TENANT_A, Uint8Array.from([3, 3, 3])))));
      expect(Array.from((await ok(dc().get(TENANT_A, upload('doc_1'))))!)).toEqual([3, 3, 3]);
      await ok(dc().put(TENANT_A, upload('doc_1'), Uint8Array.from([4])));
      expect(Array.from((await ok(dc().get(TENANT_A, upload('doc_1'))))!)).toEqual([4]);
    });

    it('staged content stays in its tenant: strangers read nothing, and their discard or purge leaves it', async () => {
      const dc = () => h().stores.documentContents;
      const bytes = xorshift(4096);
      const staged = await ok(dc().stage(TENANT_A, bytes));
      for (const t of STRANGERS) await ok(dc().discard(t, staged));
      await ok(dc().put(TENANT_A, upload('doc_1'), staged));
      for (const t of STRANGERS) expect(await ok(dc().get(t, upload('doc_1')))).toBeNull();
      expect(sameBytes((await ok(dc().get(TENANT_A, upload('doc_1'))))!, bytes)).toBe(true);
    });

    it('discard leaves content that was put, so a caller may discard whatever its command did', async () => {
      const dc = () => h().stores.documentContents;
      const staged = await ok(dc().stage(TENANT_A, Uint8Array.from([1, 2])));
      await ok(dc().put(TENANT_A, upload('doc_1'), staged));
      await ok(dc().discard(TENANT_A, staged));
      expect(Array.from((await ok(dc().get(TENANT_A, upload('doc_1'))))!)).toEqual([1, 2]);
      // Discarding content never put, twice, is harmless.
      const unused = await ok(dc().stage(TENANT_A, Uint8Array.from([3])));
      await ok(dc().discard(TENANT_A, unused));
      await ok(dc().discard(TENANT_A, unused));
    });

    it('purgeStaged removes only content never put and staged before the cutoff, at most `limit` rows', async () => {
      const dc = () => h().stores.documentContents;
      const kept = xorshift(3000);
      const unused = await ok(dc().stage(TENANT_A, xorshift(2000)));
      await ok(dc().put(TENANT_A, upload('doc_1'), await ok(dc().stage(TENANT_A, kept))));
      // Nothing was staged before 2000.
      expect(await ok(dc().purgeStaged('2000-01-01T00:00:00.000Z', 100))).toBe(0);
      expect(await ok(dc().purgeStaged('9999-01-01T00:00:00.000Z', 1))).toBeLessThanOrEqual(1);
      while ((await ok(dc().purgeStaged('9999-01-01T00:00:00.000Z', 100))) > 0);
      expect(sameBytes((await ok(dc().get(TENANT_A, upload('doc_1'))))!, kept)).toBe(true);
      // Purged content is never stored as other bytes: putting its handle either fails, storing nothing, or
      // (a store that keeps staged bytes in the handle) stores them exactly.
      const late = await h().stores.documentContents.put(TENANT_A, upload('doc_2'), unused)();
      const got = await ok(dc().get(TENANT_A, upload('doc_2')));
      if (E.isLeft(late)) expect(got).toBeNull();
      else expect(sameBytes(got!, xorshift(2000))).toBe(true);
    });
  });

