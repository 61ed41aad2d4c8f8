// A contributor's single-port adapter: document contents kept in a Map of its own (as an object store would
// keep them), the other ports in memory, joined with overridePorts. It runs only its port's group.
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { ContentKey, DocumentContentStore, Stores, UnitOfWork } from '@esig/core';
import { overridePorts, writingWhole } from '@esig/core';
import { TENANT_A, ok } from '../src/builders.js';
import { createMemoryStores } from '../src/memory-stores.js';
import { describeStoreContract } from '../src/store-contract.js';

const mapContents = (): DocumentContentStore => {
  const blobs = new Map<string, Uint8Array>();
  const name = (t: { orgId: string; mode: string }, k: ContentKey) => JSON.stringify([t.orgId, t.mode, k]);
  return writingWhole({
    put: (t, k, bytes) => TE.fromIO(() => void blobs.set(name(t, k), Uint8Array.from(bytes))),
    get: (t, k) => TE.fromIO(() => {
      const b = blobs.get(name(t, k));
      return b === undefined ? null : Uint8Array.from(b);
    }),
  });
};

describeStoreContract(
  'a Map of contents beside the memory stores',
  async () => {
    // One store for the harness: overridePorts builds the port anew for each transaction.
    const contents = mapContents();
    return { ...overridePorts(createMemoryStores(), { documentContents: () => contents }), cleanup: async () => undefined };
  },
  { ports: ['documentContents'] },
);

describe('overridePorts', () => {
  it('builds each override from the stores it joins: the transaction’s inside uow.transaction, the plain ones outside', async () => {
    const base = createMemoryStores();
    const seen: Stores[] = [];
    const contents = mapContents();
    const joined = overridePorts(base, { documentContents: (s) => (seen.push(s), contents) });
    expect(seen).toEqual([base.stores]);
    await ok(joined.uow.transaction((tx) => tx.documentContents.put(TENANT_A, { kind: 'upload', documentId: 'doc_1' }, Uint8Array.from([1]))));
    expect(seen).toHaveLength(2);
    expect(seen[1]).not.toBe(base.stores);
    expect(Array.from((await ok(joined.stores.documentContents.get(TENANT_A, { kind: 'upload', documentId: 'doc_1' })))!)).toEqual([1]);
    // The other ports are the base's.
    expect(joined.stores.documents).toBe(base.stores.documents);
  });

  it('keeps the unit of work’s promises: transactions in turns stay so, and options reach the store', async () => {
    const h = createMemoryStores();
    const seen: unknown[] = [];
    const base = { stores: h.stores, uow: { serial: true, transaction: ((work, options) => (seen.push(options), h.uow.transaction(work))) as UnitOfWork['transaction'] } };
    const moved = overridePorts(base, {});
    expect(moved.uow.serial).toBe(true);
    await ok(moved.uow.transaction(() => TE.right(1), { lockTimeoutMs: 100 }));
    expect(seen).toEqual([{ lockTimeoutMs: 100 }]);
    expect(overridePorts({ stores: h.stores, uow: { transaction: h.uow.transaction } }, {}).uow.serial).toBeUndefined();
  });
});

describe('autoCommit', () => {
  it('runs every method outside STORE_READS as a transaction of its own, and every read on the committed stores', async () => {
    const { STORE_READS, autoCommit } = await import('@esig/core');
    const { stores: real } = createMemoryStores();
    // Records where each call went: the committed stores, or the stores of a transaction.
    const calls: string[] = [];
    const recording = (where: string) =>
      Object.fromEntries(
        Object.entries(real).map(([port, methods]) => [
          port,
          Object.fromEntries(Object.keys(methods as object).map((m) => [m, () => (calls.push(`${where} ${port}.${m}`), TE.right(undefined))])),
        ]),
      ) as unknown as Stores;
    let transactions = 0;
    const uow = { transaction: <E, A>(work: (tx: Stores) => TE.TaskEither<E, A>) => (transactions++, work(recording('tx'))) };
    const wrapped = autoCommit(recording('committed'), uow as never);
    let methods = 0;
    for (const [port, ms] of Object.entries(real))
      for (const m of Object.keys(ms as object)) {
        methods++;
        calls.length = 0;
        const before = transactions;
        await (wrapped as unknown as Record<string, Record<string, () => TE.TaskEither<unknown, unknown>>>)[port]![m]!()();
        const read = (STORE_READS as unknown as Record<string, readonly string[]>)[port]!.includes(m);
        expect(calls, `${port}.${m}`).toEqual([`${read ? 'committed' : 'tx'} ${port}.${m}`]);
        expect(transactions - before, `${port}.${m}`).toBe(read ? 0 : 1);
      }
    // Not vacuous: every method of every port was tried (the ports have about 60).
    expect(methods).toBeGreaterThan(50);
  });

  it('lists every read of the ports in STORE_READS: a read left out would take a write transaction (the writer’s turn on SQLite)', async () => {
    const { STORE_READS } = await import('@esig/core');
    const { stores } = createMemoryStores();
    // The ports name their reads so; every other method writes (claim, insert, update, append, record…).
    const looksLikeRead = /^(find|list|get|count|nextRunAt)/;
    for (const [port, ms] of Object.entries(stores)) {
      const reads = Object.keys(ms as object).filter((m) => looksLikeRead.test(m)).sort();
      expect([...(STORE_READS as unknown as Record<string, readonly string[]>)[port]!].sort(), port).toEqual(reads);
    }
  });
});
