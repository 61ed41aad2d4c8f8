import type { SignatureRequest, StoreError, Stores } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { describe, expect, it } from 'vitest';
import { JOB_KINDS } from '@esig/core';
import {
  TENANT_A,
  at,
  fails,
  makeApiKey,
  makeDocument,
  makeEvent,
  makeEvidence,
  makeIdempotencyRecord,
  makeJob,
  makeOrg,
  makeSignatureRequest,
  makeSigningLink,
  makeStoredMail,
  ok,
  tagOf,
} from '../builders.js';
import type { Harness } from './harness.js';
import { deferred, firstPage, pause } from './harness.js';

export const transactionsContract = (h: Harness) =>
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
        TE.chain(() => tx.documents.setStatusForRequest(TENANT_A, { id: 'req_seeded', documentIds: [doc.id] }, 'CANCELLED')),
        TE.chain(() => tx.documentContents.put(TENANT_A, { kind: 'upload', documentId: doc.id }, Uint8Array.from([1, 2]))),
        TE.chain(() => tx.signatureRequests.update({ ...req, title: 'changed', version: req.version + 1 })),
        TE.chain(() => tx.apiKeys.insert(makeApiKey(TENANT_A))),
        TE.chain(() => tx.orgs.insert(makeOrg({ name: 'Rolled back' }))),
        TE.chain(() => tx.idempotency.insertIfAbsent(makeIdempotencyRecord(TENANT_A))),
        TE.chain(() => tx.events.append(makeEvent(TENANT_A))),
        TE.chain(() => tx.jobs.enqueue(makeJob(TENANT_A))),
        TE.chain(() => tx.signingLinks.insert(makeSigningLink(TENANT_A, { tokenHash: 'sha256_rolled_back' }))),
        TE.chain(() => tx.evidence.append(makeEvidence(TENANT_A, { requestId: req.id }))),
        TE.chain(() => tx.testMailbox.insert(makeStoredMail(TENANT_A))),
        TE.map(() => doc),
      );
    };

    const expectUntouched = async (req: SignatureRequest, seededDoc: string, docId: string) => {
      const s = h().stores;
      expect(await ok(s.documents.findById(TENANT_A, docId))).toBeNull();
      expect((await ok(s.documents.findById(TENANT_A, seededDoc)))?.status).toBe('PENDING');
      expect(await ok(s.documentContents.get(TENANT_A, { kind: 'upload', documentId: docId }))).toBeNull();
      expect(await ok(s.signatureRequests.findById(TENANT_A, req.id))).toEqual(req);
      expect(await ok(s.apiKeys.count())).toBe(0);
      expect(await ok(s.orgs.findByName('Rolled back'))).toBeNull();
      expect((await firstPage(s, TENANT_A)).items).toEqual([]);
      expect(await ok(s.jobs.nextRunAt(JOB_KINDS))).toBeNull();
      expect(await ok(s.signingLinks.findByTokenHash('sha256_rolled_back'))).toBeNull();
      expect(await ok(s.evidence.listForRequest(TENANT_A, req.id))).toEqual([]);
      expect((await ok(s.testMailbox.list(TENANT_A, { limit: 10, order: 'asc', after: null, filter: {} }))).items).toEqual([]);
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
      const job = makeJob(TENANT_A);
      const link = makeSigningLink(TENANT_A);
      const entry = makeEvidence(TENANT_A);
      const mail = makeStoredMail(TENANT_A);
      const seen = await ok(
        h().uow.transaction((tx) =>
          pipe(
            tx.documents.insert(doc),
            TE.chain(() => tx.documentContents.put(TENANT_A, { kind: 'upload', documentId: doc.id }, Uint8Array.from([5]))),
            TE.chain(() => tx.events.append(makeEvent(TENANT_A))),
            TE.chain(() => tx.documents.findById(TENANT_A, doc.id)),
            TE.bindTo('found'),
            TE.bind('listed', () => tx.documents.list(TENANT_A, { limit: 5, order: 'desc', after: null, filter: {} })),
            TE.bind('bytes', () => tx.documentContents.get(TENANT_A, { kind: 'upload', documentId: doc.id })),
            TE.bind('events', () => tx.events.list(TENANT_A, { limit: 5, order: 'desc', after: null, filter: {} })),
            TE.chainFirst(() => tx.jobs.enqueue(job)),
            TE.chainFirst(() => tx.signingLinks.insert(link)),
            TE.chainFirst(() => tx.evidence.append(entry)),
            TE.chainFirst(() => tx.testMailbox.insert(mail)),
            TE.bind('next', () => tx.jobs.nextRunAt(JOB_KINDS)),
            TE.bind('claimed', () => tx.jobs.claim(JOB_KINDS, 'worker-1', job.runAt, at(60), 5)),
            TE.bind('link', () => tx.signingLinks.findByTokenHash(link.tokenHash)),
            TE.bind('evidence', () => tx.evidence.listForRequest(TENANT_A, entry.requestId)),
            TE.bind('mail', () => tx.testMailbox.list(TENANT_A, { limit: 5, order: 'desc', after: null, filter: {} })),
          ),
        ),
      );
      expect(seen.found).toEqual(doc);
      expect(seen.listed.items).toEqual([doc]);
      expect(Array.from(seen.bytes!)).toEqual([5]);
      expect(seen.events.items).toHaveLength(1);
      expect(seen.next).toBe(job.runAt);
      expect(seen.claimed.map((j) => j.id)).toEqual([job.id]);
      expect(seen.link).toEqual(link);
      expect(seen.evidence).toEqual([entry]);
      expect(seen.mail.items).toEqual([mail]);
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

