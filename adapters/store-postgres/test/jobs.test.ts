import type { Job, JobKind, PerformedJob, Stores } from '@esig/core';
import { concurrentModification, settleClaimedJob, settleClaimedJobs } from '@esig/core';
import { TENANT_A, TENANT_B, at, fails, makeJob, ok } from '@esig/testkit';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const KINDS: readonly JobKind[] = ['mail.invite', 'seal', 'expire'];

/** What a worker settles with: the store, its transactions counted. */
const settling = (store: PostgresStore) => {
  const counted = { transactions: 0 };
  const uow = { transaction: ((work, options) => ((counted.transactions += 1), store.uow.transaction(work, options))) as typeof store.uow.transaction };
  return { counted, deps: { stores: store.stores, uow, clock: { now: () => new Date(at(1)) }, handlers: {} } };
};

describe.skipIf(!available)('PostgreSQL job queue across processes', () => {
  let db: TestDatabase;
  let pools: PostgresStore[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    pools = [await openPostgresStore({ url: db.url, poolSize: 4 })];
    for (let i = 1; i < 4; i++) pools.push(await openPostgresStore({ url: db.url, migrate: false, poolSize: 4 }));
  });
  afterAll(async () => {
    await Promise.all(pools.map((p) => p.close()));
    await db?.drop();
  });

  it('claimers on 4 pools hand each of 300 jobs to exactly one worker, which completes it', async () => {
    const jobs = Array.from({ length: 300 }, (_, i) => makeJob(i % 2 === 0 ? TENANT_A : TENANT_B, { kind: KINDS[i % 3]!, runAt: at(-(i % 11)) }));
    for (const j of jobs) await ok(pools[0]!.stores.jobs.enqueue(j));

    const completedBy = new Map<string, string>();
    const worker = async (p: number, w: number): Promise<Job[]> => {
      const store = pools[p]!;
      const name = `pool-${p}-worker-${w}`;
      const got: Job[] = [];
      for (let round = 0; round < 400; round++) {
        // Claim and complete in one transaction, as a worker does, yielding in between so others interleave.
        const batch = await ok(
          store.uow.transaction((tx) =>
            pipe(
              tx.jobs.claim(KINDS, name, at(0), at(600), 1 + ((p + w + round) % 4)),
              TE.chainFirstTaskK(() => () => pause(round % 2)),
              TE.chainFirst((claimed) =>
                TE.traverseArray((j: Job) =>
                  pipe(
                    tx.jobs.complete(j.id, name),
                    TE.map(() => {
                      // A second completion of one job would mean it was handed out twice.
                      expect(completedBy.has(j.id)).toBe(false);
                      completedBy.set(j.id, name);
                    }),
                  ),
                )(claimed),
              ),
            ),
          ),
        );
        if (batch.length === 0) return got;
        got.push(...batch);
      }
      throw new Error('the queue never ran dry');
    };
    const results = await Promise.all(pools.flatMap((_, p) => [0, 1, 2].map((w) => worker(p, w))));
    const all = results.flat();
    expect(all.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    expect(new Set(all.map((j) => j.id)).size).toBe(jobs.length);
    for (const j of all) expect(j.attempts).toBe(1);
    // Every pool did part of the work (the claims really ran side by side).
    for (let p = 0; p < pools.length; p++) expect([...completedBy.values()].some((n) => n.startsWith(`pool-${p}-`))).toBe(true);
    expect((await pools[0]!.pool.query('SELECT count(*)::int AS n FROM jobs')).rows[0].n).toBe(0);
  });

  it('a job whose worker died is handed out again once its lease ends, and the dead worker cannot complete it', async () => {
    const job = makeJob(TENANT_A, { kind: 'seal' });
    await ok(pools[0]!.stores.jobs.enqueue(job));
    expect((await ok(pools[1]!.stores.jobs.claim(['seal'], 'dies', at(0), at(30), 5))).map((j) => j.id)).toEqual([job.id]);
    const racers = await Promise.all(pools.map((p, i) => ok(p.stores.jobs.claim(['seal'], `heir-${i}`, at(30), at(90), 5))));
    expect(racers.flat().map((j) => [j.id, j.attempts])).toEqual([[job.id, 2]]);
    expect(await fails(pools[2]!.stores.jobs.complete(job.id, 'dies'))).toEqual(concurrentModification('job', job.id));
    const heir = `heir-${racers.findIndex((r) => r.length === 1)}`;
    expect(await ok(pools[3]!.stores.jobs.complete(job.id, heir))).toBeUndefined();
  });

  it('refuses a claim limit that is not an integer before asking the database', async () => {
    const r = await pools[0]!.stores.jobs.claim(KINDS, 'w', at(0), at(30), 2.5)();
    expect(r).toMatchObject({ _tag: 'Left', left: { _tag: 'StoreFailure', cause: expect.any(RangeError) } });
  });

  it('records a group of outcomes in one transaction; when one member fails in the database, the others are recorded alone', async () => {
    const store = pools[0]!;
    const jobs = Array.from({ length: 3 }, () => makeJob(TENANT_A, { kind: 'expire' }));
    for (const j of jobs) await ok(store.stores.jobs.enqueue(j));
    const claimed = await ok(store.stores.jobs.claim(['expire'], 'grouping', at(0), at(600), 3));
    expect(claimed.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
    const byId = new Map(claimed.map((j) => [j.id, j]));
    // Each record enqueues a follow-up job; the second one's id is taken, which aborts PostgreSQL's transaction.
    const taken = makeJob(TENANT_A, { kind: 'expire', runAt: at(3600) });
    await ok(store.stores.jobs.enqueue(taken));
    const followUps = jobs.map((_, i) => (i === 1 ? taken : makeJob(TENANT_A, { kind: 'expire', runAt: at(3600) })));
    const record =
      (i: number): PerformedJob =>
        ({ _tag: 'Right', right: (tx: Stores) => TE.map(() => undefined)(tx.jobs.enqueue(followUps[i]!)) });
    const { counted, deps } = settling(store);

    const outcomes = await Promise.all(settleClaimedJobs(deps)('grouping', jobs.map((j, i) => ({ job: byId.get(j.id)!, done: record(i) }))));
    // A reused job id reads as a lost race on a job (ConcurrentModification), so that member records nothing.
    expect(outcomes.map((o) => o._tag)).toEqual(['Done', 'LeaseLost', 'Done']);
    // The group, which failed whole, then each member alone.
    expect(counted.transactions).toBe(4);
    const rows = await store.pool.query<{ id: string }>('SELECT id FROM jobs WHERE id = ANY($1) ORDER BY id', [[...jobs.map((j) => j.id), ...followUps.map((f) => f.id)]]);
    // The two members recorded alone are gone, their follow-ups there once; the failed member is still held, untouched.
    expect(rows.rows.map((r) => r.id)).toEqual([jobs[1]!.id, ...followUps.map((f) => f.id)].sort());

    // A group that succeeds is one transaction.
    const more = Array.from({ length: 3 }, () => makeJob(TENANT_A, { kind: 'expire' }));
    for (const j of more) await ok(store.stores.jobs.enqueue(j));
    const got = await ok(store.stores.jobs.claim(['expire'], 'grouping-2', at(0), at(600), 3));
    expect(got.map((j) => j.id).sort()).toEqual(more.map((j) => j.id).sort());
    counted.transactions = 0;
    const fresh = got.map(() => makeJob(TENANT_A, { kind: 'expire', runAt: at(3600) }));
    const done = await Promise.all(
      settleClaimedJobs(deps)(
        'grouping-2',
        got.map((job, i) => ({ job, done: { _tag: 'Right', right: (tx: Stores) => TE.map(() => undefined)(tx.jobs.enqueue(fresh[i]!)) } as PerformedJob })),
      ),
    );
    expect(done.map((o) => o._tag)).toEqual(['Done', 'Done', 'Done']);
    expect(counted.transactions).toBe(1);
    expect((await store.pool.query('SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1)', [[...got.map((j) => j.id), ...fresh.map((f) => f.id)]])).rows[0].n).toBe(3);
  });

  it('a transaction with a lock timeout gives up on a held row at once, and leaves the connection with its own setting', async () => {
    // One connection, which would wait a minute for a lock by itself.
    const store = await openPostgresStore({ url: db.url, migrate: false, poolSize: 1, lockTimeoutMs: 60_000, statementTimeoutMs: 120_000 });
    const holder = await pools[0]!.pool.connect();
    try {
      const job = makeJob(TENANT_A, { kind: 'expire' });
      await ok(store.stores.jobs.enqueue(job));
      expect(await ok(store.stores.jobs.claim(['expire'], 'waits', at(0), at(600), 1))).toHaveLength(1);
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [job.id]);
      const r = await store.uow.transaction((tx) => tx.jobs.complete(job.id, 'waits'), { lockTimeoutMs: 50 })();
      expect(r._tag).toBe('Left');
      await holder.query('ROLLBACK');
      expect((await store.pool.query('SHOW lock_timeout')).rows[0].lock_timeout).toBe('1min');
      for (const bad of [0, -1, 2.5, Number.NaN])
        expect(await store.uow.transaction(() => TE.right(1), { lockTimeoutMs: bad })()).toMatchObject({ _tag: 'Left', left: { _tag: 'StoreFailure', cause: expect.any(RangeError) } });
    } finally {
      holder.release();
      await store.close();
    }
  });

  it("a completion that waited too long for the job's row is not a lost lease: the worker still holds the job, and retries it", async () => {
    const store = await openPostgresStore({ url: db.url, migrate: false, poolSize: 2, lockTimeoutMs: 300 });
    const holder = await pools[0]!.pool.connect();
    try {
      const job = makeJob(TENANT_A, { kind: 'expire' });
      await ok(store.stores.jobs.enqueue(job));
      const [claimed] = await ok(store.stores.jobs.claim(['expire'], 'w1', at(0), at(600), 1));
      const recorded = makeJob(TENANT_A, { kind: 'seal' });
      const done: PerformedJob = { _tag: 'Right', right: (tx: Stores) => TE.map(() => undefined)(tx.jobs.enqueue(recorded)) };
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [job.id]);
      // Waited for and deferred alike: a lock not had is about the row, not the lease.
      expect(await fails(store.uow.transaction((tx) => tx.jobs.complete(job.id, 'w1')))).toMatchObject({ _tag: 'ConcurrentModification', resource: 'row' });
      expect(await fails(store.uow.transaction((tx) => tx.jobs.complete(job.id, 'w1'), { deferWrites: true }))).toMatchObject({ _tag: 'ConcurrentModification', resource: 'row' });
      const outcome = await settleClaimedJob(settling(store).deps)(claimed!, 'w1', done)();
      await holder.query('ROLLBACK');
      expect(outcome).toMatchObject({ _tag: 'Retrying' });
      expect((await store.pool.query('SELECT count(*)::int AS n FROM jobs WHERE id = $1', [recorded.id])).rows[0].n).toBe(0);
      expect((await store.pool.query('SELECT locked_by FROM jobs WHERE id = $1', [job.id])).rows[0]?.locked_by).toBe('w1');
    } finally {
      holder.release();
      await store.close();
    }
  });

  it('a group does not wait long for a lock: it gives up, and its members run alone, waiting as usual', async () => {
    // A store that lets a statement wait a minute: only the group's own timeout ends its wait.
    const store = await openPostgresStore({ url: db.url, migrate: false, poolSize: 4, lockTimeoutMs: 60_000, statementTimeoutMs: 120_000 });
    pools.push(store);
    const jobs = Array.from({ length: 2 }, () => makeJob(TENANT_A, { kind: 'expire' }));
    for (const j of jobs) await ok(store.stores.jobs.enqueue(j));
    const claimed = await ok(store.stores.jobs.claim(['expire'], 'impatient', at(0), at(600), 2));
    expect(claimed).toHaveLength(2);
    const { counted, deps } = settling(store);
    const nothing: PerformedJob = { _tag: 'Right', right: () => TE.right(undefined) };
    // Another transaction holds the second job's row: its completion has to wait for it.
    const holder = await store.pool.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT id FROM jobs WHERE id = $1 FOR UPDATE', [claimed[1]!.id]);
      const answers = settleClaimedJobs(deps)('impatient', claimed.map((job) => ({ job, done: nothing })));
      // The group gave up on the lock: its members now run alone (the first is recorded; the second waits).
      const firstDone = await answers[0]!;
      expect(firstDone).toEqual({ _tag: 'Done' });
      expect(counted.transactions).toBe(3);
      await holder.query('COMMIT');
      expect(await answers[1]!).toEqual({ _tag: 'Done' });
    } finally {
      holder.release();
    }
    expect((await store.pool.query('SELECT count(*)::int AS n FROM jobs WHERE id = ANY($1)', [claimed.map((j) => j.id)])).rows[0].n).toBe(0);
  });
});
