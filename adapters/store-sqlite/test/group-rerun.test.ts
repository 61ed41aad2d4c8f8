import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Stores, TransactionOptions } from '@esig/core';
import { execute, executeIdempotently, invalidState, storeFailure } from '@esig/core';
import { createAesGcmSecretBox } from '@esig/runtime-node';
import { TENANT_A, makeDocument, makeSignatureRequest, ok } from '@esig/testkit';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { openSqliteStore } from '../src/index.js';
import { openJournals } from './journals.js';

/**
 * The group commit's members that may run again (`rerunnable`, as every command is) share the transaction
 * without a savepoint each; one that fails after writing undoes its group, which runs again with savepoints.
 * Transactions started in the same turn of the event loop form one group, which is how these tests make one.
 */

const dirs: string[] = [];
const stores: SqliteStore[] = [];
const openStore = (statementJournals?: 'memory' | 'file'): SqliteStore => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-sqlite-rerun-'));
  dirs.push(dir);
  const s = openSqliteStore({ path: path.join(dir, 'esig.db'), ...(statementJournals === undefined ? {} : { statementJournals }) });
  stores.push(s);
  return s;
};
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const RERUNNABLE: TransactionOptions = { rerunnable: true };
const refused = { _tag: 'Refused' as const };

/** Work that counts its runs in `runs[name]`, inserts `doc`, and then does `then`. */
const counted =
  <A>(runs: Record<string, number>, name: string, doc: ReturnType<typeof makeDocument>, then: (tx: Stores) => TE.TaskEither<unknown, A>) =>
  (tx: Stores): TE.TaskEither<unknown, A> => {
    runs[name] = (runs[name] ?? 0) + 1;
    return pipe(tx.documents.insert(doc), TE.chainW(() => then(tx)));
  };

describe('group commit: members that may run again', () => {
  /**
   * Four members, each attaching 200 of a slice's 800 documents (interleaved over its pages) to one of the
   * slice's two requests, started in one turn so that they form one group; answers how many statement
   * journals (temporary files) were open while the last member ran, beyond those open before.
   */
  const journalsOfGroup = async (
    statementJournals: 'memory' | 'file' | undefined,
    slices: readonly (TransactionOptions | undefined)[],
    afterOpen: (s: SqliteStore) => void = () => undefined,
  ) => {
    const s = openStore(statementJournals);
    afterOpen(s);
    const docs = Array.from({ length: 800 * slices.length }, () => makeDocument(TENANT_A));
    await ok(s.uow.transaction((tx) => pipe(docs.map((d) => tx.documents.insert(d)), TE.sequenceSeqArray)));
    const requests = Array.from({ length: 2 * slices.length }, () => makeSignatureRequest(TENANT_A, { documentIds: [] }));
    for (const r of requests) await ok(s.stores.signatureRequests.insert(r));
    const group = async (slice: number, options: TransactionOptions | undefined) => {
      const before = openJournals();
      let during = -1;
      const ids = docs.slice(slice * 800, slice * 800 + 800).map((d) => d.id);
      const rs = await Promise.all(
        [0, 1, 2, 3].map((m) =>
          s.uow.transaction(
            (tx) =>
              pipe(
                // Two members per request, 200 documents each, interleaved over the slice's pages.
                tx.documents.attachToRequest(TENANT_A, ids.filter((_, i) => i % 4 === m), requests[slice * 2 + (m % 2)]!.id),
                TE.map(() => void (m === 3 && (during = openJournals()))),
              ),
            options,
          )(),
        ),
      );
      expect(rs.every(E.isRight)).toBe(true);
      return during - before;
    };
    const journals: number[] = [];
    for (const [slice, options] of slices.entries()) journals.push(await group(slice, options));
    // Every member's attach committed.
    const last = await ok(s.stores.documents.findById(TENANT_A, docs.at(-1)!.id));
    expect(last?.signatureRequestId).toBe(requests.at(-1)!.id);
    return journals;
  };

  // Each member changes about 400 documents' pages, far past the 64 KiB that SQLite keeps of a savepoint's
  // page copies in memory before it moves them to a file (with journals on file, SQLite's default, as here).
  // The same group without `rerunnable` is the control: its later members run in savepoints, and the copies
  // go to a temporary file.
  it.runIf(process.platform === 'linux')('share a transaction without savepoints: no statement journal, however many pages each changes', async () => {
    const [control, rerunnable] = await journalsOfGroup('file', [undefined, RERUNNABLE]);
    expect(control).toBeGreaterThan(0); // savepoints spill
    expect(rerunnable).toBe(0);
  });

  // The default keeps savepoints' page copies in memory: the control group above, whose savepoints spilled to a
  // temporary file, writes none, and every member still commits. Migrations run with journals on file (an index
  // built in memory would be sorted there whole); the store's own setting is back once `migrate()` returns.
  it.runIf(process.platform === 'linux')('with statement journals in memory (the default), savepoints past 64 KiB write no temporary file', async () => {
    expect(await journalsOfGroup(undefined, [undefined])).toEqual([0]);
    expect(await journalsOfGroup(undefined, [undefined], (s) => expect(s.migrate()).toBe(0))).toEqual([0]);
  });

  it('one that fails after writing undoes its group, which runs again with savepoints: each answered once, from the run that committed', async () => {
    const s = openStore();
    const [a, b, c, d] = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
    for (const failure of ['left', 'throw'] as const) {
      const runs: Record<string, number> = {};
      const [ai, bi, ci, di] = [a, b, c, d].map((x) => ({ ...x, id: `${x.id}_${failure}` }));
      const results = await Promise.all([
        s.uow.transaction(counted(runs, 'a', ai!, () => TE.right('a')), RERUNNABLE)(),
        s.uow.transaction(counted(runs, 'b', bi!, () => TE.right('b')), RERUNNABLE)(),
        s.uow.transaction(
          counted(runs, 'c', ci!, () => (failure === 'left' ? TE.left(refused) : () => Promise.reject(new Error('boom')))),
          RERUNNABLE,
        )(),
        // Sees the members before it that commit, and not the one that failed.
        s.uow.transaction(
          counted(runs, 'd', di!, (tx) => TE.sequenceArray([bi!.id, ci!.id].map((id) => tx.documents.findById(TENANT_A, id)))),
          RERUNNABLE,
        )(),
      ]);
      expect(results[0]).toEqual(E.right('a'));
      expect(results[1]).toEqual(E.right('b'));
      if (failure === 'left') expect(results[2]).toEqual(E.left(refused));
      else expect(E.isLeft(results[2]!) && (results[2].left as { _tag: string })._tag).toBe('StoreFailure');
      expect(results[3]).toEqual(E.right([bi, null]));
      for (const kept of [ai, bi, di]) expect(await ok(s.stores.documents.findById(TENANT_A, kept!.id))).toEqual(kept);
      expect(await ok(s.stores.documents.findById(TENANT_A, ci!.id))).toBeNull();
      // a, b and c ran twice: the group was undone after c wrote and failed. d had not run yet.
      expect(runs).toEqual({ a: 2, b: 2, c: 2, d: 1 });
    }
  });

  it('one that fails having written nothing is answered when its group ends, and nothing runs again', async () => {
    const s = openStore();
    const runs: Record<string, number> = {};
    const [a, b] = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
    const results = await Promise.all([
      s.uow.transaction(counted(runs, 'a', a, () => TE.right('a')), RERUNNABLE)(),
      s.uow.transaction(
        (tx) => {
          runs['refused'] = (runs['refused'] ?? 0) + 1;
          // Reads, then refuses before any write: the usual shape of a domain error.
          return pipe(tx.documents.findById(TENANT_A, a.id), TE.chainW(() => TE.left(refused)));
        },
        RERUNNABLE,
      )(),
      s.uow.transaction(counted(runs, 'b', b, () => TE.right('b')), RERUNNABLE)(),
    ]);
    expect(results).toEqual([E.right('a'), E.left(refused), E.right('b')]);
    expect(runs).toEqual({ a: 1, refused: 1, b: 1 });
    for (const kept of [a, b]) expect(await ok(s.stores.documents.findById(TENANT_A, kept.id))).toEqual(kept);
  });

  // A member's second run need not match its first: another process may commit between the ROLLBACK and the
  // next BEGIN, or the clock may have moved. Here the first member takes a slot on its first run and is refused
  // on its second; the second member, refused on its first run because the slot was taken, must not keep that
  // answer once the slot's taking is undone (the review of the change found it did).
  it("a failed member's answer waits for its group: undone with it, it runs again and answers from the history that commits", async () => {
    const s = openStore();
    const runs: Record<string, number> = {};
    const slot = makeDocument(TENANT_A, { id: 'doc_slot' });
    const taker = (name: string, closedOnRerun: boolean) => (tx: Stores): TE.TaskEither<unknown, string> => {
      runs[name] = (runs[name] ?? 0) + 1;
      if (closedOnRerun && runs[name]! > 1) return TE.left({ _tag: 'Closed' as const });
      return pipe(
        tx.documents.findById(TENANT_A, slot.id),
        TE.chainW((found): TE.TaskEither<unknown, string> => (found !== null ? TE.left({ _tag: 'Taken' as const }) : pipe(tx.documents.insert(slot), TE.map(() => name)))),
      );
    };
    const results = await Promise.all([
      s.uow.transaction(taker('a', true), RERUNNABLE)(),
      s.uow.transaction(taker('b', false), RERUNNABLE)(),
      s.uow.transaction(counted(runs, 'c', makeDocument(TENANT_A), () => TE.left(refused)), RERUNNABLE)(),
    ]);
    expect(results).toEqual([E.left({ _tag: 'Closed' }), E.right('b'), E.left(refused)]);
    expect(runs).toEqual({ a: 2, b: 2, c: 2 });
    expect(await ok(s.stores.documents.findById(TENANT_A, slot.id))).toEqual(slot);
  });

  // On SQLite an idempotent command's record is written once, after the command: a command refused before its
  // first write leaves nothing to undo, so it does not make its whole group run again (a client could otherwise
  // double the work of every group it joins by sending requests that fail).
  it('an idempotent command that is refused makes nothing run again', async () => {
    const s = openStore();
    const deps = { uow: s.uow, clock: { now: () => new Date() }, secrets: createAesGcmSecretBox(randomBytes(32)) };
    const runs: Record<string, number> = {};
    const a = makeDocument(TENANT_A);
    const refusing = (tx: Stores) => {
      runs['refused'] = (runs['refused'] ?? 0) + 1;
      return pipe(tx.documents.findById(TENANT_A, a.id), TE.chainW(() => TE.left(invalidState('no'))));
    };
    const [first, second] = await Promise.all([
      execute(deps)((tx: Stores) => pipe(counted(runs, 'a', a, () => TE.right(undefined))(tx), TE.mapLeft(storeFailure)))(),
      executeIdempotently(deps)({ tenant: TENANT_A, key: 'k1', fingerprint: 'fp' }, refusing, (r) =>
        E.isRight(r) ? null : { status: 409, body: JSON.stringify({ title: r.left._tag }), headers: {} },
      )(),
    ]);
    expect(first).toEqual(E.right(undefined));
    expect(E.isRight(second!) && second.right.response.status).toBe(409);
    expect(runs).toEqual({ a: 1, refused: 1 });
    // And the refusal is stored: the same key answers it again without running the command.
    const again = await executeIdempotently(deps)({ tenant: TENANT_A, key: 'k1', fingerprint: 'fp' }, refusing, () => null)();
    expect(E.isRight(again) && again.right.replayed).toBe(true);
    expect(runs['refused']).toBe(1);
  });

  it('work that may not run again runs once: after it, even rerunnable members fail alone, in savepoints', async () => {
    const s = openStore();
    for (const onceAt of [0, 1]) {
      const runs: Record<string, number> = {};
      const docs = Array.from({ length: 4 }, () => makeDocument(TENANT_A));
      const options = (i: number) => (i === onceAt ? undefined : RERUNNABLE);
      const results = await Promise.all([
        s.uow.transaction(counted(runs, 'a', docs[0]!, () => TE.right('a')), options(0))(),
        s.uow.transaction(counted(runs, 'b', docs[1]!, () => TE.right('b')), options(1))(),
        s.uow.transaction(counted(runs, 'c', docs[2]!, () => TE.left(refused)), options(2))(),
        s.uow.transaction(counted(runs, 'd', docs[3]!, () => TE.right('d')), options(3))(),
      ]);
      expect(results).toEqual([E.right('a'), E.right('b'), E.left(refused), E.right('d')]);
      expect(runs).toEqual({ a: 1, b: 1, c: 1, d: 1 });
      expect(await ok(s.stores.documents.findById(TENANT_A, docs[2]!.id))).toBeNull();
      for (const i of [0, 1, 3]) expect(await ok(s.stores.documents.findById(TENANT_A, docs[i]!.id))).toEqual(docs[i]);
    }
  });

  // The model: each member runs alone and in order. One that succeeds commits its document and saw exactly the
  // documents of the members before it that succeeded; one that fails leaves nothing. Work that may not run again
  // runs once; the rest may run more often, but each caller is answered once.
  it('a group of any mix of members ends as if each had run alone, in order', async () => {
    const s = openStore();
    let round = 0;
    const member = fc.record({
      rerunnable: fc.boolean(),
      outcome: fc.constantFrom('ok', 'ok', 'refuseBefore', 'refuseAfter', 'throwAfter', 'duplicate'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(member, { minLength: 1, maxLength: 8 }), async (members) => {
        round++;
        const ids = members.map((_, i) => `doc_r${round}_${i}`);
        const runs = members.map(() => 0);
        const taken = makeDocument(TENANT_A, { id: `doc_r${round}_taken` });
        await ok(s.stores.documents.insert(taken));
        const results = await Promise.all(
          members.map((m, i) =>
            s.uow.transaction(
              (tx: Stores): TE.TaskEither<unknown, string[]> => {
                runs[i]!++;
                const seen = pipe(
                  TE.sequenceArray(ids.slice(0, i).map((id) => tx.documents.findById(TENANT_A, id))),
                  TE.map((found) => found.flatMap((d) => (d === null ? [] : [d.id]))),
                );
                if (m.outcome === 'refuseBefore') return pipe(seen, TE.chainW(() => TE.left(refused)));
                const insert = tx.documents.insert(makeDocument(TENANT_A, { id: ids[i]! }));
                const wrote = pipe(insert, TE.chainW(() => seen));
                switch (m.outcome) {
                  case 'ok':
                    return wrote;
                  case 'refuseAfter':
                    return pipe(wrote, TE.chainW(() => TE.left(refused)));
                  case 'throwAfter':
                    return pipe(wrote, TE.chainW(() => () => Promise.reject(new Error('boom'))));
                  case 'duplicate':
                    // Writes, then hits a uniqueness violation: a failed write after a good one.
                    return pipe(wrote, TE.chainW(() => tx.documents.insert(taken)), TE.chainW(() => seen));
                }
              },
              m.rerunnable ? RERUNNABLE : undefined,
            )(),
          ),
        );
        const succeeded = members.map((m) => m.outcome === 'ok');
        for (let i = 0; i < members.length; i++) {
          const expected = ids.slice(0, i).filter((_, j) => succeeded[j]);
          if (succeeded[i]) expect(results[i]).toEqual(E.right(expected));
          else expect(E.isLeft(results[i]!)).toBe(true);
          const stored = await ok(s.stores.documents.findById(TENANT_A, ids[i]!));
          expect(stored === null).toBe(!succeeded[i]);
          if (!members[i]!.rerunnable) expect(runs[i]).toBe(1);
          else expect(runs[i]).toBeGreaterThanOrEqual(1);
        }
      }),
      { numRuns: 150 },
    );
  });
});
