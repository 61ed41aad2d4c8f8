import * as E from 'fp-ts/lib/Either.js';
import type { ApiLogEntry, KeysetPosition, Stores, TransactionOptions, UnitOfWork } from '@esig/core';
import { TENANT_A, createMemoryStores, freshId, makeLogEntry } from '@esig/testkit';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOG_BATCH_MAX, createLogBuffer } from '../src/log-buffer.js';

/** The memory stores' unit of work, with each appended batch's entries recorded as the store receives them. */
const recording = () => {
  const mem = createMemoryStores();
  const batches: string[][] = [];
  const uow: UnitOfWork = {
    transaction: (work, options) =>
      mem.uow.transaction((tx) => {
        const apiLog: Stores['apiLog'] = { ...tx.apiLog, append: (entries) => (batches.push(entries.map((e) => e.id)), tx.apiLog.append(entries)) };
        return work(Object.create(tx, { apiLog: { value: apiLog } }) as Stores);
      }, options),
  };
  /** Every entry the store holds, page by page. */
  const written = async (): Promise<string[]> => {
    const ids: string[] = [];
    for (let after: KeysetPosition | null = null; ; ) {
      const page = await mem.stores.apiLog.list(TENANT_A, { limit: 100, order: 'asc', after, filter: {} })();
      if (page._tag === 'Left') throw new Error(page.left._tag);
      ids.push(...page.right.items.map((e) => e.id));
      const last = page.right.items.at(-1);
      if (!page.right.hasMore || last === undefined) return ids;
      after = { createdAt: last.createdAt, id: last.id };
    }
  };
  return { batches, uow, written };
};

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const entries = (n: number): ApiLogEntry[] => Array.from({ length: n }, () => makeLogEntry(TENANT_A, { id: freshId('log') }));

afterEach(() => {
  vi.useRealTimers();
});

describe('the request log buffer', () => {
  // On SQLite a batch is written synchronously, on the event loop every request shares: 400 entries (200 ms
  // of a busy server) held it for 6–12 ms, and the requests that arrived meanwhile waited that long.
  it(`writes a burst in batches of at most ${LOG_BATCH_MAX} entries, all of them, in order`, async () => {
    const { batches, uow } = recording();
    const log = createLogBuffer(uow, silent);
    const added = entries(1_000);
    for (const e of added) log.add(e);
    await log.flush(true);

    expect(LOG_BATCH_MAX).toBeLessThanOrEqual(64);
    expect(Math.max(...batches.map((b) => b.length))).toBeLessThanOrEqual(LOG_BATCH_MAX);
    expect(batches.flat()).toEqual(added.map((e) => e.id));
  });

  it('writes what a quiet server logged within its interval, without waiting for a batch to fill', async () => {
    vi.useFakeTimers();
    const { batches, uow } = recording();
    const log = createLogBuffer(uow, silent, 200);
    const added = entries(3);
    for (const e of added) log.add(e);
    expect(batches).toEqual([]);

    await vi.advanceTimersByTimeAsync(200);
    expect(batches).toEqual([added.map((e) => e.id)]);
    await log.flush(true);
  });

  // Declared rerunnable, an append may be run, undone and run again by the store (SQLite's group commit does so
  // when a member after it fails having written): each entry must still be written once.
  it('declares its append rerunnable, and an append run, undone and run again writes each entry once', async () => {
    const { uow, written } = recording();
    const options: Array<TransactionOptions | undefined> = [];
    const undoneFirst: UnitOfWork = {
      transaction: (work, o) => {
        options.push(o);
        if (o?.rerunnable !== true) return uow.transaction(work, o);
        return async () => {
          // A first run, rolled back by answering Left after it wrote; then the run that commits.
          await uow.transaction((tx) => async () => ((await work(tx)()), E.left({ _tag: 'StoreFailure', cause: 'undone' } as const)))();
          return uow.transaction(work, o)();
        };
      },
    };
    const log = createLogBuffer(undoneFirst, silent);
    const added = entries(LOG_BATCH_MAX * 2 + 3);
    for (const e of added) log.add(e);
    await log.flush(true);

    expect(options.every((o) => o?.rerunnable === true)).toBe(true);
    expect(await written()).toEqual(added.map((e) => e.id));
  });

  it('loses nothing it was given when the buffer stops', async () => {
    const { uow, written } = recording();
    const log = createLogBuffer(uow, silent);
    const added = entries(LOG_BATCH_MAX + 7);
    for (const e of added) log.add(e);
    await log.flush(true);

    expect((await written()).sort()).toEqual(added.map((e) => e.id).sort());
  });
});
