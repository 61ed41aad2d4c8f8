import * as E from 'fp-ts/lib/Either.js';
import * as fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DomainError, IdempotencyContext, Stores, UnitOfWork } from '@esig/core';
import { createSignatureRequest, execute, executeIdempotently } from '@esig/core';
import { makeDocument } from '@esig/testkit';
import { createAesGcmSecretBox } from '@esig/runtime-node';
import { OTHER_TENANTS, TENANT } from './arbitraries.js';

const OTHER_TENANT = OTHER_TENANTS[0]!;
import { harness, principal, right } from './support.js';

/*
 * create-request's unread form (see `Unread` in command.ts): where transactions run side by side, the request is
 * written and its documents linked without reading them first, the store's guarded link refusing what the command
 * would refuse; the command itself then reads and says why. Whatever the documents, a caller must not be able to
 * tell the two ways apart: the same answer, the same rows.
 */

const LIMITS = { maxPagesPerDocument: 30, maxPagesPerRequest: 40 };

/** A harness whose transactions run serially (as SQLite's) or side by side (as PostgreSQL's), counting document reads. */
const setup = (mode: 'serial' | 'side by side') => {
  const h = harness();
  let reads = 0;
  let transactions = 0;
  const counting = (tx: Stores): Stores => ({
    ...tx,
    documents: {
      ...tx.documents,
      findByIds: (tenant, ids) => {
        reads++;
        return tx.documents.findByIds(tenant, ids);
      },
    },
  });
  const uow: UnitOfWork = {
    // Counted when run, not when made (a caller may make one it never runs).
    transaction: (work, options) => () => {
      transactions++;
      return h.uow.transaction((tx) => work(counting(tx)), options)();
    },
    serial: mode === 'serial',
  };
  const deps = { ...h, uow, pageLimits: LIMITS };
  return { h, deps, reads: () => reads, transactions: () => transactions };
};

interface Doc {
  readonly pages: number;
  readonly theirs: boolean;
  readonly taken: boolean;
}

/** The documents inserted as `doc_0`, `doc_1`…: some of another tenant, some in a request already. */
const seed = async (h: ReturnType<typeof harness>, docs: readonly Doc[]) => {
  for (const [i, d] of docs.entries())
    await right(
      h.stores.documents.insert(
        makeDocument(d.theirs ? OTHER_TENANT : TENANT, { id: `doc_${i}`, pageCount: d.pages, signatureRequestId: d.taken ? 'req_earlier' : null }),
      ),
    );
};

/** What a caller and the store can see afterwards: the answer (the new request's id aside) and every document's link. */
const seen = async (h: ReturnType<typeof harness>, docs: readonly Doc[], r: E.Either<DomainError, { id: string }>) => {
  const newId = E.isRight(r) ? r.right.id : null;
  const links = [];
  for (const [i, d] of docs.entries()) {
    const found = await right(h.stores.documents.findById(d.theirs ? OTHER_TENANT : TENANT, `doc_${i}`));
    links.push(found?.signatureRequestId === newId && newId !== null ? 'the new request' : found?.signatureRequestId);
  }
  const requests = await right(h.stores.signatureRequests.list(TENANT, { limit: 100, order: 'asc', after: null, filter: {} }));
  return { answer: E.isRight(r) ? E.right({ ...r.right, id: 'new' }) : r, links, requests: requests.items.length };
};

// Mostly documents that may be linked, so that lists of them reach the page limit often.
const mostlyNot = fc.constantFrom(false, false, false, true);
const docArb = fc.record({ pages: fc.integer({ min: 1, max: 30 }), theirs: mostlyNot, taken: mostlyNot });
const caseArb = fc
  .array(docArb, { minLength: 1, maxLength: 5 })
  // Distinct ids (a repeated one is refused before any store is asked), `doc_<length>` being one that does not exist.
  .chain((docs) =>
    fc.record({ docs: fc.constant(docs), listed: fc.shuffledSubarray([...Array(docs.length + 1).keys()], { minLength: 1, maxLength: Math.min(4, docs.length + 1) }) }),
  );

describe('create-request, its unread form where transactions run side by side', () => {
  it('a request whose documents may be linked is created without reading them', async () => {
    const s = setup('side by side');
    await seed(s.h, [{ pages: 20, theirs: false, taken: false }, { pages: 20, theirs: false, taken: false }]);
    const req = await right(execute(s.deps)(createSignatureRequest(s.deps)(principal(), { title: 'Lease', documentIds: ['doc_0', 'doc_1'] })));
    expect(s.reads()).toBe(0);
    expect((await right(s.h.stores.documents.findById(TENANT, 'doc_1')))?.signatureRequestId).toBe(req.id);
    // Where transactions run one at a time, the command reads as it always did.
    const serial = setup('serial');
    await seed(serial.h, [{ pages: 20, theirs: false, taken: false }]);
    await right(execute(serial.deps)(createSignatureRequest(serial.deps)(principal(), { title: 'Lease', documentIds: ['doc_0'] })));
    expect(serial.reads()).toBe(1);
  });

  it('refused, the command reads and says why: a missing document, one taken, too many pages; nothing is stored', async () => {
    const s = setup('side by side');
    await seed(s.h, [
      { pages: 30, theirs: false, taken: false },
      { pages: 20, theirs: false, taken: false },
      { pages: 1, theirs: false, taken: true },
      { pages: 1, theirs: true, taken: false },
    ]);
    const create = (documentIds: string[]) => execute(s.deps)(createSignatureRequest(s.deps)(principal(), { title: 'Lease', documentIds }))();
    expect(await create(['doc_0', 'doc_3'])).toEqual(E.left({ _tag: 'ValidationFailed', detail: 'documentIds.1 no document doc_3.', errors: [{ path: 'documentIds.1', message: 'no document doc_3' }] }));
    expect(await create(['doc_1', 'doc_2'])).toEqual(E.left({ _tag: 'InvalidState', detail: 'Document doc_2 already belongs to signature request req_earlier.' }));
    expect(await create(['doc_0', 'doc_1'])).toMatchObject(E.left({ _tag: 'ValidationFailed', detail: 'The documents have 50 pages together; a request may have at most 40.' }));
    // Each was refused unread, then read once.
    expect(s.reads()).toBe(3);
    for (const id of ['doc_0', 'doc_1']) expect((await right(s.h.stores.documents.findById(TENANT, id)))?.signatureRequestId).toBeNull();
    expect((await right(s.h.stores.signatureRequests.list(TENANT, { limit: 10, order: 'asc', after: null, filter: {} }))).items).toEqual([]);
  });

  it('under an Idempotency-Key: refused unread, the command answers under the same claim, and a retry replays it', async () => {
    const s = setup('side by side');
    await seed(s.h, [{ pages: 1, theirs: false, taken: true }, { pages: 2, theirs: false, taken: false }]);
    const secrets = createAesGcmSecretBox(Buffer.alloc(32, 7));
    const run = executeIdempotently({ uow: s.deps.uow, clock: s.h.clock, secrets, stores: s.h.stores });
    const ctx = (key: string): IdempotencyContext => ({ tenant: TENANT, key, fingerprint: `fp-${key}` });
    const render = (r: E.Either<DomainError, { id: string }>) => ({ status: E.isRight(r) ? 201 : 409, body: JSON.stringify(E.isRight(r) ? r.right.id : r.left._tag), headers: {} });
    const refused = await right(run(ctx('a'), createSignatureRequest(s.deps)(principal(), { title: 't', documentIds: ['doc_0'] }), render));
    expect(refused).toEqual({ response: { status: 409, body: '"InvalidState"', headers: {} }, replayed: false });
    expect(await right(run(ctx('a'), createSignatureRequest(s.deps)(principal(), { title: 't', documentIds: ['doc_0'] }), render))).toEqual({ ...refused, replayed: true });
    const created = await right(run(ctx('b'), createSignatureRequest(s.deps)(principal(), { title: 't', documentIds: ['doc_1'] }), render));
    expect(created.response.status).toBe(201);
    expect((await right(s.h.stores.documents.findById(TENANT, 'doc_1')))?.signatureRequestId).toBe(JSON.parse(created.response.body));
    // One read: the refused call's; the created one read nothing.
    expect(s.reads()).toBe(1);
  });

  describe('under an Idempotency-Key, a new key: its record stored completed in the unread transaction, no claim first', () => {
    const secrets = createAesGcmSecretBox(Buffer.alloc(32, 9));
    const render = (r: E.Either<DomainError, { id: string }>) => ({ status: E.isRight(r) ? 201 : 409, body: JSON.stringify(E.isRight(r) ? r.right.id : r.left._tag), headers: {} });
    const ctx = (key: string, fingerprint = `fp-${key}`): IdempotencyContext => ({ tenant: TENANT, key, fingerprint, sealResponse: false });
    const harnessed = async () => {
      const s = setup('side by side');
      await seed(s.h, [{ pages: 1, theirs: false, taken: false }, { pages: 1, theirs: false, taken: true }]);
      const run = (c: IdempotencyContext, documentIds: string[]) =>
        executeIdempotently({ uow: s.deps.uow, clock: s.h.clock, secrets, stores: s.h.stores })(c, createSignatureRequest(s.deps)(principal(), { title: 't', documentIds }), render)();
      const requests = async () => (await right(s.h.stores.signatureRequests.list(TENANT, { limit: 10, order: 'asc', after: null, filter: {} }))).items.length;
      return { s, run, requests };
    };

    it('one transaction, no read, and the record completed with the response at once; a retry replays it', async () => {
      const { s, run, requests } = await harnessed();
      const first = await run(ctx('a'), ['doc_0']);
      expect(E.isRight(first) && first.right.response.status).toBe(201);
      expect([s.transactions(), s.reads()]).toEqual([1, 0]);
      expect(await right(s.h.stores.idempotency.find(TENANT, 'a'))).toMatchObject({ state: 'completed', fingerprint: 'fp-a', response: { status: 201, inClear: true } });
      expect(await run(ctx('a'), ['doc_0'])).toEqual(E.right({ response: E.isRight(first) && first.right.response, replayed: true }));
      expect(await requests()).toBe(1);
    });

    it('refused: the key claimed and the command run once, read, without trying the unread form again', async () => {
      const { s, run, requests } = await harnessed();
      expect(await run(ctx('a'), ['doc_1'])).toEqual(E.right({ response: { status: 409, body: '"InvalidState"', headers: {} }, replayed: false }));
      // The unread transaction, the command's, and the one that stores its error on the claim (the claim itself is one
      // statement on the stores, outside any). The unread form once: a second try would be a fourth.
      expect([s.transactions(), s.reads()]).toEqual([3, 1]);
      expect(await requests()).toBe(0);
    });

    it('an input the command refuses before writing (a blank title) is stored as on the claim\'s way: replayed, and the key not reused', async () => {
      const { s, run, requests } = await harnessed();
      const blank = await right(
        executeIdempotently({ uow: s.deps.uow, clock: s.h.clock, secrets, stores: s.h.stores })(
          ctx('blank'),
          createSignatureRequest(s.deps)(principal(), { title: '   ', documentIds: ['doc_0'] }),
          (r) => ({ status: E.isRight(r) ? 201 : 400, body: JSON.stringify(E.isRight(r) ? r.right.id : r.left._tag), headers: {} }),
        ),
      );
      expect(blank).toEqual({ response: { status: 400, body: '"ValidationFailed"', headers: {} }, replayed: false });
      expect(await right(s.h.stores.idempotency.find(TENANT, 'blank'))).toMatchObject({ state: 'completed', response: { status: 400 } });
      // Another request with the key: refused as reused, nothing created.
      expect(await run(ctx('blank', 'another body'), ['doc_0'])).toEqual(E.left({ _tag: 'IdempotencyKeyReused' }));
      expect(await requests()).toBe(0);
    });

    it("a key another call holds, or used for another request: nothing commits, and the answer is the claim's way's", async () => {
      const { s, run, requests } = await harnessed();
      // Another caller's claim, in flight.
      const now = s.h.clock.now().getTime();
      await right(
        s.h.stores.idempotency.insertIfAbsent({
          tenant: TENANT,
          key: 'held',
          fingerprint: 'fp-held',
          state: 'in_progress',
          response: null,
          createdAt: new Date(now).toISOString(),
          lockedUntil: new Date(now + 60_000).toISOString(),
          expiresAt: new Date(now + 86_400_000).toISOString(),
        }),
      );
      expect(await run(ctx('held'), ['doc_0'])).toEqual(E.left({ _tag: 'IdempotencyInProgress' }));
      // A key answered for another body.
      expect(E.isRight(await run(ctx('used'), ['doc_0']))).toBe(true);
      expect(await run(ctx('used', 'another body'), ['doc_0'])).toEqual(E.left({ _tag: 'IdempotencyKeyReused' }));
      expect(await requests()).toBe(1);
    });
  });

  it('property: whatever the documents listed, the answer and the rows are those of the command run as it is', async () => {
    await fc.assert(
      fc.asyncProperty(caseArb, async ({ docs, listed }) => {
        const outcomes = [];
        for (const mode of ['serial', 'side by side'] as const) {
          const s = setup(mode);
          await seed(s.h, docs);
          const r = await execute(s.deps)(createSignatureRequest(s.deps)(principal(), { title: 'Lease', documentIds: listed.map((i) => `doc_${i}`) }))();
          outcomes.push({ ...(await seen(s.h, docs, r)), reads: s.reads() });
        }
        const [serial, sideBySide] = outcomes;
        expect({ ...sideBySide!, reads: undefined }).toEqual({ ...serial!, reads: undefined });
        // Side by side, a request that was created read nothing; a refused one was read once, as serially.
        expect(sideBySide!.reads).toBe(E.isRight(serial!.answer) ? 0 : serial!.reads);
      }),
      { numRuns: 500 },
    );
  });
});
