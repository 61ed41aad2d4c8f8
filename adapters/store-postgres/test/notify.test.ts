import { TENANT_A, makeJob, ok } from '@esig/testkit';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { JOBS_CHANNEL, openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Collects what a channel hears; `next()` waits for the next message (or fails after `ms`). */
const inbox = () => {
  const got: string[] = [];
  const waiters: Array<() => void> = [];
  return {
    got,
    handler: (payload: string) => {
      got.push(payload);
      waiters.splice(0).forEach((w) => w());
    },
    until: async (n: number, ms = 3_000) => {
      const deadline = Date.now() + ms;
      while (got.length < n) {
        if (Date.now() > deadline) throw new Error(`heard ${got.length} of ${n} notifications: ${JSON.stringify(got)}`);
        await Promise.race([new Promise<void>((r) => waiters.push(r)), pause(50)]);
      }
      return got;
    },
  };
};

let barriers = 0;
/**
 * Resolves once `listener` has handed its handlers every notification committed before this call: a store
 * listens on one connection for all its channels, and PostgreSQL delivers to a session in commit order, so
 * a mark sent now arrives after all of them. What has not been heard by then was never sent, however slow
 * the machine. The deadline only bounds how long a broken listener is waited for.
 */
const barrier = async (listener: PostgresStore, sender: PostgresStore) => {
  const channel = `barrier_${++barriers}`;
  const mark = inbox();
  const stop = await listener.listen(channel, mark.handler);
  await sender.notify(channel);
  await mark.until(1, 20_000);
  await stop();
};

describe.skipIf(!available)('LISTEN/NOTIFY', () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    a = await openPostgresStore({ url: db.url });
    b = await openPostgresStore({ url: db.url, migrate: false });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  it('delivers notifications from another process to every listener of the channel, and stops when asked', async () => {
    const one = inbox();
    const two = inbox();
    const other = inbox();
    const stopOne = await a.listen('wake up', one.handler);
    const stopTwo = await a.listen('wake up', two.handler);
    const stopOther = await a.listen('Other"Channel', other.handler);
    await b.notify('wake up', 'hello');
    await b.notify('Other"Channel');
    expect(await one.until(1)).toEqual(['hello']);
    expect(await two.until(1)).toEqual(['hello']);
    expect(await other.until(1)).toEqual(['']);
    await stopOne();
    await b.notify('wake up', 'again');
    expect(await two.until(2)).toEqual(['hello', 'again']);
    await barrier(a, b);
    expect(one.got).toEqual(['hello']);
    await stopTwo();
    await stopOther();
  });

  it('an enqueued job wakes listeners of JOBS_CHANNEL when it commits, and not when rolled back or deduplicated', async () => {
    const heard = inbox();
    const stop = await b.listen(JOBS_CHANNEL, heard.handler);
    await ok(a.stores.jobs.enqueue(makeJob(TENANT_A, { kind: 'seal', dedupeKey: 'seal:req_1' })));
    expect(await heard.until(1)).toEqual(['seal']);

    let enqueued = false;
    const rolledBack = await a.uow.transaction((tx) =>
      pipe(
        tx.jobs.enqueue(makeJob(TENANT_A, { kind: 'expire' })),
        TE.chainFirstTaskK(() => async () => {
          enqueued = true;
          // Inside the transaction nothing has been sent yet: not even what was committed before the mark.
          await barrier(b, a);
          expect(heard.got).toEqual(['seal']);
        }),
        TE.chainW(() => TE.left('abort' as const)),
      ),
    )();
    expect(enqueued && rolledBack._tag === 'Left').toBe(true);
    expect(await ok(a.stores.jobs.enqueue(makeJob(TENANT_A, { dedupeKey: 'seal:req_1' })))).toBe(false);
    await ok(a.uow.transaction((tx) => tx.jobs.enqueue(makeJob(TENANT_A, { kind: 'mail.invite' }))));
    expect(await heard.until(2)).toEqual(['seal', 'mail.invite']);
    await barrier(b, a);
    expect(heard.got).toEqual(['seal', 'mail.invite']);
    await stop();
  });

  it('after its connection is killed the listener reconnects, wakes its handlers once, and hears again', async () => {
    const heard = inbox();
    const stop = await a.listen('survivor', heard.handler);
    const killed = await db.raw((c) =>
      c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'esig-listener'", [db.name]),
    );
    // Both stores' listeners (b's listened before); the wake-up below shows a's was among them.
    expect(killed.rowCount).toBeGreaterThanOrEqual(1);
    // The wake-up after reconnecting: whatever was sent meanwhile is lost, so handlers are told to look.
    expect(await heard.until(1, 5_000)).toEqual(['']);
    await b.notify('survivor', 'after');
    expect(await heard.until(2)).toEqual(['', 'after']);
    await stop();
  });

  it('refuses a channel name PostgreSQL cannot hold', async () => {
    await expect(a.listen('', () => undefined)).rejects.toThrow(RangeError);
    await expect(a.listen('x'.repeat(64), () => undefined)).rejects.toThrow(RangeError);
  });
});
