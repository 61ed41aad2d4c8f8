import { randomBytes } from 'node:crypto';
import type { Admission, ApiKey, KeyLimits } from '@esig/core';
import { createManualClock, makeApiKey } from '@esig/testkit';
import { describeKeyAdmissionContract } from '@esig/testkit/key-admission-contract';
import { describeRateLimiterContract } from '@esig/testkit/rate-limiter-contract';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { createPgKeyAdmission } from '../src/key-admission.js';
import { MAX_BATCH, createPgRateLimiter } from '../src/rate-limiter.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase, relayTo } from './pg.js';

const START = '2026-11-23T08:00:00.000Z';
const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Bucket ids of their own per test (and per property run), since the table outlives them. */
const fresh = (name: string) => `${name}:${randomBytes(6).toString('hex')}`;

/**
 * `pool` as one property run's limiters see it, and `settled`, which waits for every statement they sent,
 * their fire-and-forget sweeps included. Every run's clock starts again at START, so a sweep of an earlier
 * run (cutoff up to that run's last time less a window) that the server runs late would remove buckets of
 * the next run that still hold calls in its windows: a run ends only once its sweeps have.
 */
const settling = (pool: pg.Pool) => {
  const out = new Set<Promise<unknown>>();
  const query = (...args: unknown[]) => {
    const p = (pool.query as (...a: unknown[]) => Promise<unknown>).apply(pool, args);
    out.add(p);
    const forget = () => void out.delete(p);
    p.then(forget, forget);
    return p;
  };
  const settled = async () => {
    while (out.size > 0) await Promise.allSettled([...out]);
  };
  return { pool: { query } as unknown as pg.Pool, settled };
};

describe.skipIf(!available)('PostgreSQL rate limiter', () => {
  let db: TestDatabase;
  let a: PostgresStore;
  let b: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    a = await openPostgresStore({ url: db.url });
    b = await openPostgresStore({ url: db.url });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  // Two pools on one database stand for two processes; each call is a round trip, so fewer property runs.
  describeRateLimiterContract('PostgreSQL, two processes', (windowMs, clock) => [a.rateLimiter(windowMs, clock), b.rateLimiter(windowMs, clock)], { runScale: 0.15 });

  // The one-statement KeyAdmission, on the same windows as the rate limiter.
  describeKeyAdmissionContract('PostgreSQL, one statement, two processes', (windowMs, clock) => ({
    apiKeys: a.stores.apiKeys,
    rateLimiter: b.rateLimiter(windowMs, clock),
    admissions: [a.keyAdmission(windowMs, clock), b.keyAdmission(windowMs, clock)],
  }));

  const hitsOf = async (bucket: string): Promise<number> => {
    const r = await a.pool.query<{ n: string }>('SELECT count(*) AS n FROM rate_limit_hits WHERE bucket = $1', [bucket]);
    return Number(r.rows[0]?.n ?? 0);
  };

  it('50 concurrent consumers from two processes on the database clock: exactly `limit` admitted, never more', async () => {
    // The limiters' sweeps (on the database clock, so past every manual clock of the tests after) end with it.
    const [onA, onB] = [settling(a.pool), settling(b.pool)];
    const limitA = createPgRateLimiter(onA.pool, 60_000);
    const limitB = createPgRateLimiter(onB.pool, 60_000);
    const bucket = { id: fresh('key'), limit: 20 };
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? limitA : limitB).consume([bucket])()));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(await hitsOf(bucket.id)).toBe(20);
    // The admitted saw 19, 18, … 0 calls left: each decided after the previous one was recorded.
    expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const d of decisions.filter((x) => !x.allowed)) expect(d).toMatchObject({ limit: 20, remaining: 0, retryAfterS: 60 });
    await Promise.all([onA.settled(), onB.settled()]);
  });

  it('on the database clock, a full bucket refuses, and its calls leave the window as time passes', async () => {
    // The database's clock cannot be moved by the test, so nothing here asks the machine to be quick: the
    // refusal is shown on a window of 10 s, which four calls do not outlast however slow they are; the slide on
    // one of 400 ms, by waiting longer than it (a slow machine only makes more time pass).
    // Its limiters' sweeps (cutoff: now less a window, past every manual clock of the tests after) end with it.
    const [onA, onB] = [settling(a.pool), settling(b.pool)];
    const full = { id: fresh('full'), limit: 3 };
    const long = createPgRateLimiter(onA.pool, 10_000);
    for (let i = 0; i < 3; i++) expect((await long.consume([full])()).allowed).toBe(true);
    const refused = await long.consume([full])();
    expect(refused).toMatchObject({ allowed: false, remaining: 0 });
    expect(refused.retryAfterS).toBeGreaterThanOrEqual(1);
    expect(refused.retryAfterS).toBeLessThanOrEqual(10);

    const sliding = { id: fresh('slide'), limit: 3 };
    const short = createPgRateLimiter(onA.pool, 400);
    for (let i = 0; i < 3; i++) expect((await short.consume([sliding])()).allowed).toBe(true);
    await pause(450);
    // The three have left: a full window's room again, seen from another process.
    expect(await createPgRateLimiter(onB.pool, 400).consume([sliding])()).toMatchObject({ allowed: true, remaining: 2 });
    await Promise.all([onA.settled(), onB.settled()]);
  });

  it('keeps only the calls still in the window: rows per bucket stay bounded by the limit, not the traffic', async () => {
    const clock = createManualClock(START);
    const limiter = a.rateLimiter(1_000, clock);
    const bucket = { id: fresh('busy'), limit: 10 };
    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      clock.advance(37);
      if ((await limiter.consume([bucket])()).allowed) admitted++;
    }
    // 1 s of window at one call per 37 ms holds 27 calls, over the limit of 10: a tenth-ish get in.
    expect(admitted).toBeGreaterThan(80);
    expect(await hitsOf(bucket.id)).toBeLessThanOrEqual(bucket.limit);
  });

  it("a bucket's row keeps where its log starts, after admitted and refused calls alike (migration 0011)", async () => {
    // Where the function starts reading and deleting the log; below it lie only deleted rows, which a scan
    // from the bucket's lowest seq would walk through until vacuum removes them. Five days after START, out of
    // reach of sweeps the tests before may have left running (see below); its own end with it.
    const clock = createManualClock(new Date(Date.parse(START) + 5 * 86_400_000).toISOString());
    const sweeps = settling(a.pool);
    const limiter = createPgRateLimiter(sweeps.pool, 1_000, clock);
    const bucket = { id: fresh('head'), limit: 10 };
    let refused = 0;
    for (let i = 0; i < 120; i++) {
      clock.advance(i < 60 ? 37 : 211);
      if (!(await limiter.consume([bucket])()).allowed) refused++;
      const r = await a.pool.query<{ first_seq: string; next_seq: string; lowest: string | null; lowest_at: string | null }>(
        `SELECT w.first_seq, w.next_seq, h.seq AS lowest, h.at_ms AS lowest_at FROM rate_limit_buckets w
         LEFT JOIN LATERAL (SELECT seq, at_ms FROM rate_limit_hits x WHERE x.bucket = w.bucket ORDER BY seq LIMIT 1) h ON true
         WHERE w.bucket = $1`,
        [bucket.id],
      );
      const row = r.rows[0]!;
      // The head is the log's first row (or where the next call goes when the window is empty) …
      expect(row.first_seq).toBe(row.lowest ?? row.next_seq);
      // … and that row is still in the window.
      if (row.lowest_at !== null) expect(Number(row.lowest_at)).toBeGreaterThan(clock.now().getTime() - 1_000);
    }
    // Both paths ran: refusals while the calls came every 37 ms, admissions that let old calls go after.
    expect(refused).toBeGreaterThan(20);
    expect(await hitsOf(bucket.id)).toBeLessThanOrEqual(bucket.limit);

    // A call refused by another of its buckets still deletes what left this one's window, and moves the head.
    const key = { id: fresh('head-key'), limit: 100 };
    const org = { id: fresh('head-org'), limit: 3 };
    for (let i = 0; i < 2; i++) expect((await limiter.consume([key])()).allowed).toBe(true);
    clock.advance(600);
    // A third call keeps the key's bucket young enough for the limiter's sweep to leave it.
    expect((await limiter.consume([key])()).allowed).toBe(true);
    for (let i = 0; i < 3; i++) expect((await limiter.consume([org])()).allowed).toBe(true);
    clock.advance(500);
    expect((await limiter.consume([key, org])()).allowed).toBe(false);
    expect(await hitsOf(key.id)).toBe(1);
    const head = await a.pool.query<{ first_seq: string }>('SELECT first_seq FROM rate_limit_buckets WHERE bucket = $1', [key.id]);
    expect(head.rows[0]!.first_seq).toBe('2');
    await sweeps.settled();
  });

  it('finds the first call in the window however many left since the last call (0 to all 40)', async () => {
    // The head is probed, then 1, 3, 7, … past it, then bisected: every count of calls gone takes its own path.
    const clock = createManualClock(new Date(Date.parse(START) + 3 * 86_400_000).toISOString());
    const sweeps = settling(a.pool);
    const limiter = createPgRateLimiter(sweeps.pool, 1_000, clock);
    for (let gone = 0; gone <= 40; gone++) {
      const bucket = { id: fresh(`gone${gone}`), limit: 100 };
      const from = clock.now().getTime();
      for (let i = 0; i < 40; i++) {
        expect((await limiter.consume([bucket])()).allowed).toBe(true);
        clock.advance(10);
      }
      // Call i was at from + 10 i; the window (now − 1000 ms, now] leaves out the first `gone`.
      clock.set(new Date(from + 1_000 + 10 * (gone - 1)));
      const d = await limiter.consume([bucket])();
      expect(d).toMatchObject({ allowed: true, remaining: 100 - (40 - gone) - 1 });
      expect(await hitsOf(bucket.id)).toBe(40 - gone + 1);
      clock.advance(1_000);
    }
    await sweeps.settled();
  });

  it('a log missing a row in its middle (deleted by hand) is still read right, by a scan', async () => {
    const clock = createManualClock(new Date(Date.parse(START) + 4 * 86_400_000).toISOString());
    const sweeps = settling(a.pool);
    const limiter = createPgRateLimiter(sweeps.pool, 1_000, clock);
    const bucket = { id: fresh('holed'), limit: 10 };
    for (let i = 0; i < 8; i++) {
      expect((await limiter.consume([bucket])()).allowed).toBe(true);
      clock.advance(100);
    }
    await a.pool.query('DELETE FROM rate_limit_hits WHERE bucket = $1 AND seq = 1', [bucket.id]);
    // Calls 0 and 1 (the deleted one) have left; 2 … 7 count: 6, so 3 more fit after this one.
    clock.advance(350);
    expect(await limiter.consume([bucket])()).toMatchObject({ allowed: true, remaining: 3 });
    for (let i = 0; i < 3; i++) expect((await limiter.consume([bucket])()).allowed).toBe(true);
    expect((await limiter.consume([bucket])()).allowed).toBe(false);
    await sweeps.settled();
  });

  it('its tables are UNLOGGED: a decision never waits for a WAL flush', async () => {
    const r = await a.pool.query<{ relname: string; relpersistence: string }>(
      "SELECT relname, relpersistence FROM pg_class WHERE relname IN ('rate_limit_buckets', 'rate_limit_hits') ORDER BY relname",
    );
    expect(r.rows).toEqual([
      { relname: 'rate_limit_buckets', relpersistence: 'u' },
      { relname: 'rate_limit_hits', relpersistence: 'u' },
    ]);
  });

  it('sweeps running beside busy callers neither block them nor take away counted calls', async () => {
    const clock = createManualClock(START);
    const limiters = [a.rateLimiter(60_000, clock), b.rateLimiter(60_000, clock)];
    const org = { id: fresh('org'), limit: 40 };
    const idle = Array.from({ length: 20 }, () => ({ id: fresh('idle'), limit: 5 }));
    for (const x of idle) await limiters[0]!.consume([x])();
    clock.advance(120_000);
    // Sweeps with a cutoff that makes every idle bucket and the org (once used) fair game, racing 60 calls.
    const sweeps = Array.from({ length: 10 }, () => a.pool.query('SELECT esig_rate_limit_sweep($1)', [clock.now().getTime() - 60_000]));
    const calls = Array.from({ length: 60 }, (_, i) => limiters[i % 2]!.consume([org, idle[i % idle.length]!])());
    const [decisions] = await Promise.all([Promise.all(calls), Promise.all(sweeps)]);
    expect(decisions.filter((d) => d.allowed)).toHaveLength(40);
    expect(await hitsOf(org.id)).toBe(40);
  });

  it('a call recorded as a sweep removed its bucket does not break the next log of the bucket', async () => {
    // What that race leaves (the sweep's snapshot predates the call): hits without their bucket row.
    // A day after START: the test before this one leaves its limiters' own sweeps (fire-and-forget, cutoff
    // START + 60 s) possibly still running, and one of them would take these hits away mid-test.
    const clock = createManualClock(new Date(Date.parse(START) + 86_400_000).toISOString());
    const limiter = a.rateLimiter(60_000, clock);
    const bucket = { id: fresh('orphan'), limit: 3 };
    await a.pool.query('INSERT INTO rate_limit_hits (bucket, seq, at_ms) VALUES ($1, 0, $2), ($1, 1, $2)', [bucket.id, clock.now().getTime()]);
    for (const remaining of [2, 1, 0]) expect(await limiter.consume([bucket])()).toMatchObject({ allowed: true, remaining });
    expect((await limiter.consume([bucket])()).allowed).toBe(false);
  });

  it('buckets unused for a whole window are swept away', async () => {
    // Two days after START, out of reach of sweeps the tests before may have left running (see above).
    const clock = createManualClock(new Date(Date.parse(START) + 2 * 86_400_000).toISOString());
    const limiter = a.rateLimiter(1_000, clock);
    const old = { id: fresh('old'), limit: 5 };
    await limiter.consume([old])();
    expect(await hitsOf(old.id)).toBe(1);
    clock.advance(2_500);
    await limiter.consume([{ id: fresh('new'), limit: 5 }])();
    let left = 1;
    // The sweep runs off the call's path (fire and forget); the deadline only bounds how long a sweep that never
    // comes is waited for.
    for (const end = Date.now() + 20_000; left > 0 && Date.now() < end; ) {
      await pause(20);
      left = (await a.pool.query('SELECT 1 FROM rate_limit_buckets WHERE bucket = $1', [old.id])).rowCount ?? 0;
    }
    expect(left).toBe(0);
    expect(await hitsOf(old.id)).toBe(0);
  });

  it('the rate limiter decides calls that arrive together as one by one, a bucket named twice included (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        // Up to three bucket names, each with a limit; a name may come twice, with two limits.
        fc.array(fc.record({ name: fc.constantFrom('p', 'q', 'r'), limit: fc.integer({ min: 1, max: 6 }) }), { minLength: 1, maxLength: 3 }),
        fc.array(fc.record({ calls: fc.integer({ min: 1, max: 10 }), advanceMs: fc.integer({ min: 0, max: 40_000 }) }), { minLength: 1, maxLength: 4 }),
        async (spec, groups) => {
          const clock = createManualClock(START);
          const [pa, pb] = [settling(a.pool), settling(b.pool)];
          const together = createPgRateLimiter(pa.pool, 60_000, clock);
          const alone = createPgRateLimiter(pb.pool, 60_000, clock);
          const [x, y] = [fresh('x'), fresh('y')];
          const named = (prefix: string) => spec.map((s) => ({ id: `${prefix}:${s.name}`, limit: s.limit }));
          try {
            for (const g of groups) {
              clock.advance(g.advanceMs);
              const batch = await Promise.all(Array.from({ length: g.calls }, () => together.consume(named(x))()));
              const oneByOne = [];
              for (let i = 0; i < g.calls; i++) oneByOne.push(await alone.consume(named(y))());
              expect(batch).toEqual(oneByOne);
            }
          } finally {
            await Promise.all([pa.settled(), pb.settled()]);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  describe('key admission: the calls of one key that arrive while its statement is out go together', () => {
    const newKey = async (): Promise<ApiKey> => {
      const key = makeApiKey({ orgId: fresh('org'), mode: 'test' }, { secretHash: randomBytes(32).toString('hex') });
      const r = await a.stores.apiKeys.insert(key)();
      if (E.isLeft(r)) throw new Error(JSON.stringify(r.left));
      return key;
    };
    const admitted = async (p: Promise<E.Either<unknown, Admission>>): Promise<Admission> => {
      const r = await p;
      if (E.isLeft(r)) throw new Error(`expected Right, got ${JSON.stringify(r.left)}`);
      return r.right;
    };
    /** The store's pool, counting the admission statements sent through it. */
    const counting = () => {
      const sent: number[] = [];
      const pool = {
        query: (config: { name?: string; values?: unknown[] }, ...rest: unknown[]) => {
          if (typeof config === 'object' && config.name === 'esig_key_admission_many') sent.push(Number(config.values?.[5]));
          return (a.pool.query as (...args: unknown[]) => Promise<unknown>)(config, ...rest);
        },
      } as unknown as pg.Pool;
      return { pool, sent };
    };

    it('30 calls at once from one process: two statements (the first call, then the 29 that waited), exactly the limit admitted', async () => {
      const clock = createManualClock(START);
      const { pool, sent } = counting();
      const admission = createPgKeyAdmission(pool, 60_000, clock);
      const key = await newKey();
      const all = await Promise.all(Array.from({ length: 30 }, () => admitted(admission.admit(key.secretHash, { perKey: 12, perOrg: 100 })())));
      expect(sent).toEqual([1, 29]);
      expect(all.every((x) => x.key?.id === key.id)).toBe(true);
      const yes = all.filter((x) => x.decision?.allowed === true);
      expect(yes.map((x) => x.decision!.remaining).sort((p, q) => p - q)).toEqual(Array.from({ length: 12 }, (_, i) => i));
      for (const x of all.filter((y) => y.decision?.allowed !== true)) expect(x.decision).toMatchObject({ allowed: false, limit: 12, remaining: 0, retryAfterS: 60 });
      // In arrival order: the batch admits its first calls and refuses the rest.
      expect(all.map((x) => x.decision!.allowed)).toEqual(Array.from({ length: 30 }, (_, i) => i < 12));
      // An idle key's call goes out alone, at once.
      clock.advance(60_000);
      await admitted(admission.admit(key.secretHash, { perKey: 12, perOrg: 100 })());
      expect(sent).toEqual([1, 29, 1]);
    });

    it('a statement decides at most MAX_BATCH calls: the rest wait for the next', async () => {
      const { pool, sent } = counting();
      const admission = createPgKeyAdmission(pool, 60_000, createManualClock(START));
      const key = await newKey();
      const all = await Promise.all(Array.from({ length: 600 }, () => admitted(admission.admit(key.secretHash, { perKey: 1_000, perOrg: 1_000 })())));
      expect(sent).toEqual([1, MAX_BATCH, MAX_BATCH, 600 - 1 - 2 * MAX_BATCH]);
      expect(all.map((x) => x.decision!.remaining)).toEqual(Array.from({ length: 600 }, (_, i) => 999 - i));
    });

    it('a connection that goes silent fails the statement out on it, and the key\'s next calls go out on another', async () => {
      const relay = await relayTo(db.url);
      // One pooled connection, so that the next statement takes the one made silent.
      const store = await openPostgresStore({ url: relay.url, statementTimeoutMs: 400, lockTimeoutMs: 200, poolSize: 1 });
      try {
        const admission = store.keyAdmission(60_000);
        const key = await newKey();
        const limits = { perKey: 100, perOrg: 100 };
        // The first call also starts a sweep on the pool's one connection; the second waits for it to end.
        for (let i = 0; i < 2; i++) expect((await admitted(admission.admit(key.secretHash, limits)())).decision?.allowed).toBe(true);
        for (const r of relay.connections) r.silent = true;
        const lost = admission.admit(key.secretHash, limits)();
        const behind = admission.admit(key.secretHash, limits)();
        // The statement on the silent connection fails once the driver stops waiting for it; the call that
        // waited behind it goes out on a fresh connection and is answered.
        expect(E.isLeft(await lost)).toBe(true);
        expect((await admitted(behind)).decision?.allowed).toBe(true);
      } finally {
        await store.close().catch(() => undefined);
        await relay.close();
      }
    });

    it('refuses, before any statement, a limit the function could not take (above a 32-bit integer)', async () => {
      const { pool, sent } = counting();
      const admission = createPgKeyAdmission(pool, 60_000);
      const key = await newKey();
      for (const limits of [{ perKey: 2 ** 31, perOrg: 10 }, { perKey: 10, perOrg: 2 ** 31 }]) {
        const r = await admission.admit(key.secretHash, limits)();
        expect(E.isLeft(r) && r.left._tag === 'StoreFailure' && r.left.cause instanceof RangeError).toBe(true);
      }
      await expect(a.rateLimiter(60_000).consume([{ id: fresh('big'), limit: 2 ** 31 }])()).rejects.toThrow(RangeError);
      expect(sent).toEqual([]);
      // The function itself refuses a bucket with no limit, rather than counting nothing against it.
      await expect(a.pool.query('SELECT * FROM esig_rate_limit_consume_many($1, $2, 60000, NULL, 1)', [[fresh('nolimit')], [null]])).rejects.toMatchObject({ code: '22004' });
    });

    it('a call that arrives after its key was revoked is refused, even when it waited behind a statement sent before', async () => {
      // Its sweep (on the database clock) ends with it, as in the tests above.
      const sweeps = settling(a.pool);
      const admission = createPgKeyAdmission(sweeps.pool, 60_000);
      const key = await newKey();
      const limits: KeyLimits = { perKey: 100, perOrg: 100 };
      await admitted(admission.admit(key.secretHash, limits)());
      // Hold the organization's bucket, so that the next statement waits in the database.
      const holder = await a.pool.connect();
      try {
        await holder.query('BEGIN');
        await holder.query('SELECT 1 FROM rate_limit_buckets WHERE bucket = $1 FOR UPDATE', [`org:${key.orgId}`]);
        const before = admission.admit(key.secretHash, limits)();
        for (let waiting = 0; waiting === 0; ) {
          await pause(10);
          const r = await a.pool.query<{ n: string }>(
            "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%esig_rate_limit_consume_many%'",
          );
          waiting = Number(r.rows[0]!.n);
        }
        const revoked = await a.stores.apiKeys.revoke({ orgId: key.orgId, mode: key.mode }, key.id, START)();
        expect(E.isRight(revoked)).toBe(true);
        const after = admission.admit(key.secretHash, limits)();
        await holder.query('COMMIT');
        // The statement out before the revocation counts its call; the call after it waited, and is refused.
        expect((await admitted(before)).decision?.allowed).toBe(true);
        const late = await admitted(after);
        expect(late.decision).toBeNull();
        expect(late.key?.revokedAt).not.toBeNull();
        await sweeps.settled();
      } finally {
        await holder.query('ROLLBACK').catch(() => undefined);
        holder.release();
      }
    });

    it('a batch decides as its calls would one by one at the same time (property, against the one-by-one path)', async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.record({ perKey: fc.integer({ min: 1, max: 8 }), perOrg: fc.integer({ min: 1, max: 8 }) }),
          fc.array(fc.record({ calls: fc.integer({ min: 1, max: 12 }), advanceMs: fc.integer({ min: 0, max: 40_000 }) }), { minLength: 1, maxLength: 5 }),
          async (limits, groups) => {
            const clock = createManualClock(START);
            // Its sweeps end with the run, as above.
            const [pa, pb] = [settling(a.pool), settling(b.pool)];
            const together = createPgKeyAdmission(pa.pool, 60_000, clock);
            const alone = createPgKeyAdmission(pb.pool, 60_000, clock);
            const [x, y] = [await newKey(), await newKey()];
            const view = (d: Admission) => JSON.stringify(d.decision);
            try {
              for (const g of groups) {
                clock.advance(g.advanceMs);
                const batch = await Promise.all(Array.from({ length: g.calls }, () => admitted(together.admit(x.secretHash, limits)())));
                const oneByOne: Admission[] = [];
                for (let i = 0; i < g.calls; i++) oneByOne.push(await admitted(alone.admit(y.secretHash, limits)()));
                expect(batch.map(view)).toEqual(oneByOne.map(view));
              }
            } finally {
              await Promise.all([pa.settled(), pb.settled()]);
            }
          },
        ),
        { numRuns: 25 },
      );
    });
  });
});
