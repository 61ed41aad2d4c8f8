import type { Job, JobKind } from '@esig/core';
import { TENANT_A, TENANT_B, at, makeJob, ok } from '@esig/testkit';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const KINDS: readonly JobKind[] = ['mail.invite', 'seal', 'expire'];

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
                    TE.map((done) => {
                      expect(done).toBe(true);
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
    expect(await ok(pools[2]!.stores.jobs.complete(job.id, 'dies'))).toBe(false);
    const heir = `heir-${racers.findIndex((r) => r.length === 1)}`;
    expect(await ok(pools[3]!.stores.jobs.complete(job.id, heir))).toBe(true);
  });

  it('refuses a claim limit that is not an integer before asking the database', async () => {
    const r = await pools[0]!.stores.jobs.claim(KINDS, 'w', at(0), at(30), 2.5)();
    expect(r).toMatchObject({ _tag: 'Left', left: { _tag: 'StoreFailure', cause: expect.any(RangeError) } });
  });
});
