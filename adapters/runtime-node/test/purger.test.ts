import type { StoreError } from '@esig/core';
import { IDEMPOTENCY_PURGE_GRACE_MS, purgeExpiredIdempotencyRecords, storeFailure } from '@esig/core';
import { TENANT_A, TENANT_B, createManualClock, createMemoryStores, makeIdempotencyRecord, ok } from '@esig/testkit';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningPurger } from '../src/purger.js';
import { startPurger } from '../src/purger.js';

// Real timers, a manual clock for what has expired. Every wait is for a condition, never for a duration.

const T0 = '2030-01-01T00:00:00.000Z';

const until = async (probe: () => Promise<boolean> | boolean, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};

const recordingLogger = () => {
  const lines: Array<{ level: 'info' | 'warn'; fields: Record<string, unknown>; msg: string }> = [];
  return {
    lines,
    info: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'info', fields, msg }),
    warn: (fields: Record<string, unknown>, msg: string) => void lines.push({ level: 'warn', fields, msg }),
  };
};

describe('startPurger', () => {
  const running: RunningPurger[] = [];
  afterEach(async () => {
    for (const p of running.splice(0)) await p.stop();
  });

  /** Memory stores holding `expired` records past their TTL and grace, and one that is not. */
  const world = async (expired: number) => {
    const { stores } = createMemoryStores();
    const clock = createManualClock(T0);
    const old = Array.from({ length: expired }, (_, i) => makeIdempotencyRecord(i % 2 ? TENANT_A : TENANT_B, { expiresAt: T0 }));
    const live = makeIdempotencyRecord(TENANT_A, { expiresAt: new Date(Date.parse(T0) + 1).toISOString() });
    for (const r of [...old, live]) await ok(stores.idempotency.insertIfAbsent(r));
    clock.advance(IDEMPOTENCY_PURGE_GRACE_MS);
    const batches: number[] = [];
    const purge = (batch: number) => TE.map((n: number) => (batches.push(n), n))(purgeExpiredIdempotencyRecords({ stores, clock })(batch));
    const remaining = async () => (await Promise.all(old.map(async (r) => (await ok(stores.idempotency.find(r.tenant, r.key))) !== null))).filter(Boolean).length;
    return { stores, live, purge, batches, remaining };
  };

  it('purges a backlog in full batches, then a short one, and keeps what has not expired', async () => {
    const w = await world(2_500);
    const logger = recordingLogger();
    running.push(startPurger({ what: 'idempotency records', purge: w.purge, batch: 1_000, intervalMs: 3_600_000, logger }));
    await until(() => logger.lines.length > 0, 'the first run');
    expect(w.batches).toEqual([1_000, 1_000, 500]);
    expect(logger.lines).toEqual([{ level: 'info', fields: { what: 'idempotency records', purged: 2_500 }, msg: 'purged' }]);
    expect(await w.remaining()).toBe(0);
    expect(await ok(w.stores.idempotency.find(w.live.tenant, w.live.key))).toEqual(w.live);
  });

  it('a failed batch ends its run with a warning; the next run purges', async () => {
    const w = await world(3);
    const logger = recordingLogger();
    let fail = true;
    const purge = (batch: number): TE.TaskEither<StoreError, number> => (fail ? ((fail = false), TE.left(storeFailure(new Error('disk I/O error')))) : w.purge(batch));
    running.push(startPurger({ what: 'idempotency records', purge, batch: 10, intervalMs: 1, logger }));
    await until(async () => (await w.remaining()) === 0, 'the second run');
    expect(logger.lines[0]).toEqual({
      level: 'warn',
      fields: { what: 'idempotency records', purged: 0, error: 'StoreFailure', cause: 'disk I/O error' },
      msg: 'purge failed; it runs again later',
    });
    expect(logger.lines[1]).toEqual({ level: 'info', fields: { what: 'idempotency records', purged: 3 }, msg: 'purged' });
  });

  it('a purge that throws is logged and does not stop later runs, nor make stop() throw', async () => {
    const w = await world(2);
    const logger = recordingLogger();
    let thrown = false;
    const purge = (batch: number): TE.TaskEither<StoreError, number> =>
      thrown ? w.purge(batch) : () => ((thrown = true), Promise.reject(new Error('driver bug')));
    const p = startPurger({ what: 'idempotency records', purge, batch: 10, intervalMs: 1, logger });
    await until(async () => (await w.remaining()) === 0, 'a run after the throw');
    expect(logger.lines[0]).toMatchObject({ level: 'warn', fields: { error: 'driver bug' } });
    await expect(p.stop()).resolves.toBeUndefined();
  });

  it('after stop() no batch runs, and stop() waits for the one under way', async () => {
    const w = await world(5);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let calls = 0;
    const purge = (batch: number): TE.TaskEither<StoreError, number> => async () => {
      calls++;
      await gate;
      return w.purge(batch)();
    };
    const p = startPurger({ what: 'idempotency records', purge, batch: 2, intervalMs: 1, logger: recordingLogger() });
    await until(() => calls === 1, 'the first batch');
    let stopped = false;
    const stopping = p.stop().then(() => void (stopped = true));
    await new Promise((r) => setImmediate(r));
    expect(stopped).toBe(false);
    release();
    await stopping;
    // The batch under way finished; the full batch it returned would have led to another, but none starts.
    expect(calls).toBe(1);
    expect(await w.remaining()).toBe(3);
  });

  it('a stop() in the turn between two batches starts no further batch', async () => {
    const w = await world(10);
    let calls = 0;
    let p: RunningPurger | null = null;
    const purge = (batch: number): TE.TaskEither<StoreError, number> => () => {
      calls++;
      // Lands after this batch has answered, while the run waits for its next turn.
      if (calls === 1) setImmediate(() => void p!.stop());
      return w.purge(batch)();
    };
    p = startPurger({ what: 'idempotency records', purge, batch: 2, intervalMs: 1, logger: recordingLogger() });
    await until(() => calls > 0, 'the first batch');
    await p.stop();
    expect(calls).toBe(1);
    expect(await w.remaining()).toBe(8);
  });

  it('refuses a batch below 1', () => {
    expect(() => startPurger({ what: 'x', purge: () => TE.right(0), batch: 0, intervalMs: 1, logger: recordingLogger() })).toThrow(RangeError);
  });
});
