import { randomBytes } from 'node:crypto';
import type { RateBucket, RateDecision } from '@esig/core';
import { createManualClock } from '@esig/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index';
import { openPostgresStore } from '../src/index';
import type { TestDatabase } from './pg';
import { available, createTestDatabase } from './pg';

const START = '2026-11-23T08:00:00.000Z';
const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
/** Bucket ids of their own per test (and per property run), since the table outlives them. */
const fresh = (name: string) => `${name}:${randomBytes(6).toString('hex')}`;

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

  const hitsOf = async (bucket: string): Promise<number> => {
    const r = await a.pool.query<{ n: number }>('SELECT cardinality(hits) AS n FROM rate_limit_windows WHERE bucket = $1', [bucket]);
    return r.rows[0]?.n ?? 0;
  };

  it('50 concurrent consumers from two processes: exactly `limit` admitted, never more', async () => {
    const limitA = a.rateLimiter(60_000);
    const limitB = b.rateLimiter(60_000);
    const bucket = { id: fresh('key'), limit: 20 };
    const decisions = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 === 0 ? limitA : limitB).consume([bucket])()));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
    expect(await hitsOf(bucket.id)).toBe(20);
    // The admitted saw 19, 18, … 0 calls left: each decided after the previous one was recorded.
    expect(decisions.filter((d) => d.allowed).map((d) => d.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    for (const d of decisions.filter((x) => !x.allowed)) expect(d).toMatchObject({ limit: 20, remaining: 0, retryAfterS: 60 });
  });

  it('a call counts in every bucket or in none, under concurrency too', async () => {
    const limiters = [a.rateLimiter(60_000), b.rateLimiter(60_000)];
    const org = { id: fresh('org'), limit: 15 };
    const keys = Array.from({ length: 6 }, () => ({ id: fresh('key'), limit: 100 }));
    // Each key's buckets in a different order than the org's, so lock order must not follow the argument order.
    const decisions = await Promise.all(
      Array.from({ length: 48 }, (_, i) => {
        const key = keys[i % keys.length]!;
        return limiters[i % 2]!.consume(i % 3 === 0 ? [org, key] : [key, org])().then((d) => ({ key: key.id, d }));
      }),
    );
    const admitted = decisions.filter((x) => x.d.allowed);
    expect(admitted).toHaveLength(15);
    expect(await hitsOf(org.id)).toBe(15);
    for (const key of keys) expect(await hitsOf(key.id)).toBe(admitted.filter((x) => x.key === key.id).length);
    // The org bucket is the constrained one, and is the one reported.
    for (const { d } of decisions) expect(d.limit).toBe(15);
  });

  it('decides as a sliding-window model over two buckets, with an injected clock', async () => {
    const calls = fc.array(
      fc.record({
        key: fc.constantFrom('k1', 'k2'),
        gap: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 1_500 }), fc.integer({ min: 0, max: 12_000 }), fc.constantFrom('window' as const, 'window-1' as const)),
      }),
      { maxLength: 40 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1_000, max: 10_000 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 8 }),
        fc.boolean(),
        calls,
        async (windowMs, keyLimit, orgLimit, orgFirst, seq) => {
          const clock = createManualClock(START);
          const limiters = [a.rateLimiter(windowMs, clock), b.rateLimiter(windowMs, clock)];
          const run = fresh('run');
          const model = new Map<string, number[]>();
          let i = 0;
          for (const call of seq) {
            clock.advance(call.gap === 'window' ? windowMs : call.gap === 'window-1' ? windowMs - 1 : call.gap);
            const now = clock.now().getTime();
            const key: RateBucket = { id: `${run}:${call.key}`, limit: keyLimit };
            const org: RateBucket = { id: `${run}:org`, limit: orgLimit };
            const buckets = orgFirst ? [org, key] : [key, org];
            const used = buckets.map((x) => (model.get(x.id) ?? []).filter((t) => t > now - windowMs));
            const free = buckets.map((x, j) => x.limit - used[j]!.length);
            const allowed = free.every((f) => f > 0);

            const d: RateDecision = await limiters[i++ % 2]!.consume(buckets)();
            expect(d.allowed).toBe(allowed);
            if (allowed) {
              for (const x of buckets) model.set(x.id, [...(model.get(x.id) ?? []), now]);
              const worst = free.indexOf(Math.min(...free));
              expect(d.remaining).toBe(free[worst]! - 1);
              expect(d.limit).toBe(buckets[worst]!.limit);
              expect(d.retryAfterS).toBe(0);
            } else {
              expect(d.remaining).toBe(0);
              // The wait until the fullest bucket frees a place.
              const waits = buckets.map((x, j) => (free[j]! > 0 ? 0 : used[j]![used[j]!.length - x.limit]! + windowMs - now));
              expect(d.retryAfterS).toBe(Math.max(1, Math.ceil(Math.max(...waits) / 1000)));
            }
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('on the database clock, the window slides: a full bucket admits again once its oldest call has left', async () => {
    const limiter = a.rateLimiter(400);
    const bucket = { id: fresh('slide'), limit: 3 };
    for (let i = 0; i < 3; i++) expect((await limiter.consume([bucket])()).allowed).toBe(true);
    const refused = await limiter.consume([bucket])();
    expect(refused).toMatchObject({ allowed: false, remaining: 0, retryAfterS: 1, resetS: 1 });
    await pause(450);
    expect(await b.rateLimiter(400).consume([bucket])()).toMatchObject({ allowed: true, remaining: 2 });
  });

  it('a refused call costs nothing in the buckets that had room', async () => {
    const clock = createManualClock(START);
    const limiter = a.rateLimiter(60_000, clock);
    const tight = { id: fresh('tight'), limit: 1 };
    const roomy = { id: fresh('roomy'), limit: 10 };
    expect((await limiter.consume([tight, roomy])()).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect((await limiter.consume([roomy, tight])()).allowed).toBe(false);
    expect(await hitsOf(roomy.id)).toBe(1);
    expect(await limiter.consume([roomy])()).toMatchObject({ allowed: true, remaining: 8, limit: 10 });
  });

  it('buckets unused for a whole window are swept away', async () => {
    const clock = createManualClock(START);
    const limiter = a.rateLimiter(1_000, clock);
    const old = { id: fresh('old'), limit: 5 };
    await limiter.consume([old])();
    expect(await hitsOf(old.id)).toBe(1);
    clock.advance(2_500);
    await limiter.consume([{ id: fresh('new'), limit: 5 }])();
    let left = 1;
    for (let i = 0; i < 50 && left > 0; i++) {
      await pause(20);
      left = (await a.pool.query('SELECT 1 FROM rate_limit_windows WHERE bucket = $1', [old.id])).rowCount ?? 0;
    }
    expect(left).toBe(0);
  });
});
