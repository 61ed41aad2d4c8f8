import { randomBytes } from 'node:crypto';
import type { Clock, RateBucket, RateLimiter } from '@esig/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ManualClock } from './fakes.js';
import { createManualClock } from './fakes.js';

/**
 * Opens limiters over one shared state, each on its own connection where the adapter has connections (two
 * processes on one database, say): the suite spreads its calls across them. A single-process adapter
 * returns the same limiter twice. Time is `clock`.
 */
export type OpenRateLimiters = (windowMs: number, clock: Clock) => readonly RateLimiter[];

export interface RateLimiterContractOptions {
  /** Multiplies the property tests' run counts (below 1 for adapters whose calls are round trips). */
  readonly runScale?: number;
}

/**
 * Each test and property run starts a day after the previous one: an adapter's state is shared by all of
 * them, and a clock that went back in time would let an earlier run's late sweep erase a later run's calls
 * (real clocks do not go back by days).
 */
let runs = 0;
const freshClock = () => createManualClock(new Date(Date.parse('2026-01-01T00:00:00.000Z') + runs++ * 86_400_000));

/** Bucket ids of their own per test and property run, since an adapter's state may outlive them. */
const freshRun = () => randomBytes(6).toString('hex');

/** A call: which key, how long after the previous one, and whether the key's limit was changed. */
const callsArb = fc.array(
  fc.record({
    key: fc.constantFrom('key_1', 'key_2'),
    gap: fc.oneof(
      fc.constant(0),
      fc.integer({ min: 0, max: 2_000 }),
      fc.integer({ min: 0, max: 90_000 }),
      // Exactly at the edge of the window, where an off-by-one would show.
      fc.constantFrom('window' as const, 'window-1' as const),
    ),
    /** Mostly the configured limit; sometimes a changed one (a reconfigured key), which must stay exact too. */
    shift: fc.oneof({ weight: 4, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.integer({ min: -3, max: 3 }) }),
  }),
  { maxLength: 150, size: 'medium' },
);

const configArb = fc.record({
  windowMs: fc.integer({ min: 1_000, max: 60_000 }),
  // Large enough limits that logs grow (past 8, 16, 32 entries) while the window slides.
  keyLimit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 25 })),
  orgLimit: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 40 })),
  orgFirst: fc.boolean(),
});

/** The model: admitted call times per bucket. */
const used = (log: readonly number[], now: number, windowMs: number) => log.filter((t) => t > now - windowMs);

/**
 * The RateLimiter port's contract (ports/rate-limiter.ts), as a sliding-window model the adapter must match
 * call for call: exact admission at the window's edge, all-or-nothing over several buckets, the reported
 * limit, remaining, reset and Retry-After, and no overshoot under concurrent calls.
 */
export const describeRateLimiterContract = (adapterName: string, open: OpenRateLimiters, options: RateLimiterContractOptions = {}): void => {
  const scaled = (n: number) => Math.max(5, Math.round(n * (options.runScale ?? 1)));
  /** The limiters, and a function that picks the next one in turn. */
  const opened = (windowMs: number, clock: ManualClock) => {
    const limiters = open(windowMs, clock);
    let i = 0;
    return () => limiters[i++ % limiters.length]!;
  };

  describe(`rate limiter contract: ${adapterName}`, () => {
    it('matches a sliding-window model over two buckets: counted in both or neither, never over a limit', async () => {
      await fc.assert(
        fc.asyncProperty(configArb, callsArb, async ({ windowMs, keyLimit, orgLimit, orgFirst }, calls) => {
          const clock = freshClock();
          const next = opened(windowMs, clock);
          const run = freshRun();
          const model = new Map<string, number[]>();
          for (const call of calls) {
            clock.advance(call.gap === 'window' ? windowMs : call.gap === 'window-1' ? windowMs - 1 : call.gap);
            const now = clock.now().getTime();
            const key: RateBucket = { id: `${run}:${call.key}`, limit: Math.max(1, keyLimit + call.shift) };
            const org: RateBucket = { id: `${run}:org`, limit: orgLimit };
            const buckets = orgFirst ? [org, key] : [key, org];
            const logs = buckets.map((b) => used(model.get(b.id) ?? [], now, windowMs));
            const free = buckets.map((b, i) => b.limit - logs[i]!.length);
            const expectAllowed = free.every((f) => f > 0);

            const d = await next().consume(buckets)();
            expect(d.allowed).toBe(expectAllowed);
            if (expectAllowed) {
              // Counted in every bucket.
              for (const b of buckets) model.set(b.id, [...(model.get(b.id) ?? []), now]);
              const worst = free.indexOf(Math.min(...free));
              expect(d.remaining).toBe(free[worst]! - 1);
              expect(d.limit).toBe(buckets[worst]!.limit);
              expect(d.retryAfterS).toBe(0);
              const oldest = logs[worst]![0];
              expect(d.resetS).toBe(Math.max(1, Math.ceil((oldest === undefined ? windowMs : oldest + windowMs - now) / 1000)));
            } else {
              // Counted in none (the model is left alone), and told how long to wait.
              const waits = buckets.map((b, i) => (free[i]! > 0 ? 0 : logs[i]![logs[i]!.length - b.limit]! + windowMs - now));
              expect(d.remaining).toBe(0);
              expect(d.retryAfterS).toBe(Math.max(1, Math.ceil(Math.max(...waits) / 1000)));
              const refused = free.findIndex((f) => f <= 0);
              expect(d.limit).toBe(buckets[refused]!.limit);
              expect(d.resetS).toBe(Math.max(1, Math.ceil((logs[refused]![0]! + windowMs - now) / 1000)));
            }
          }
          // Never more than the limit in any window (the organization's limit never changes).
          const org = model.get(`${run}:org`) ?? [];
          for (const t of org) expect(org.filter((u) => u > t - windowMs && u <= t).length).toBeLessThanOrEqual(orgLimit);
        }),
        { numRuns: scaled(200) },
      );
    });

    it('admits again exactly when the oldest call leaves the window, and Retry-After rounds that up', async () => {
      await fc.assert(
        fc.asyncProperty(configArb, fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 20 }), async ({ windowMs, keyLimit }, gaps) => {
          const clock = freshClock();
          const next = opened(windowMs, clock);
          const b = [{ id: `${freshRun()}:key_1`, limit: keyLimit }];
          const admitted: number[] = [];
          for (const gap of gaps) {
            clock.advance(gap);
            if ((await next().consume(b)()).allowed) admitted.push(clock.now().getTime());
          }
          // Fill the bucket, then get refused.
          let d = await next().consume(b)();
          while (d.allowed) {
            admitted.push(clock.now().getTime());
            d = await next().consume(b)();
          }
          const now = clock.now().getTime();
          const window = admitted.filter((t) => t > now - windowMs);
          const exactWait = window[window.length - keyLimit]! + windowMs - now;
          expect(d.retryAfterS).toBe(Math.max(1, Math.ceil(exactWait / 1000)));
          clock.set(new Date(now + exactWait - 1));
          expect((await next().consume(b)()).allowed).toBe(false);
          clock.set(new Date(now + exactWait));
          expect((await next().consume(b)()).allowed).toBe(true);
        }),
        { numRuns: scaled(100) },
      );
    });

    it('asks to wait for the slowest refusing bucket, whatever the order of the buckets', async () => {
      const clock = freshClock();
      const next = opened(60_000, clock);
      const run = freshRun();
      const org = { id: `${run}:org_1`, limit: 2 };
      const key = { id: `${run}:key_1`, limit: 1 };
      await next().consume([org, { id: `${run}:key_2`, limit: 5 }])();
      clock.advance(30_000);
      await next().consume([org, key])();
      clock.advance(1_000);
      // The org bucket frees a call in 29 s, the key bucket in 59 s.
      expect(await next().consume([org, key])()).toMatchObject({ allowed: false, retryAfterS: 59 });
      expect(await next().consume([key, org])()).toMatchObject({ allowed: false, retryAfterS: 59 });
    });

    it('never overshoots with many concurrent calls, and each admitted call sees one fewer left', async () => {
      await fc.assert(
        fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 60 }), async (limit, n) => {
          const clock = freshClock();
          const next = opened(60_000, clock);
          const bucket = { id: `${freshRun()}:key_1`, limit };
          const results = await Promise.all(Array.from({ length: n }, () => next().consume([bucket])()));
          const admitted = results.filter((r) => r.allowed);
          expect(admitted).toHaveLength(Math.min(limit, n));
          // Each decided after the previous one was recorded: limit-1, limit-2, … in some order.
          expect(admitted.map((r) => r.remaining).sort((x, y) => x - y)).toEqual(Array.from({ length: admitted.length }, (_, i) => limit - admitted.length + i));
          for (const r of results.filter((x) => !x.allowed)) expect(r).toMatchObject({ limit, remaining: 0, retryAfterS: 60 });
        }),
        { numRuns: scaled(100) },
      );
    });

    it('a call counts in every bucket or in none, under concurrency, whatever order the buckets come in', async () => {
      const clock = freshClock();
      const next = opened(60_000, clock);
      const run = freshRun();
      const org = { id: `${run}:org`, limit: 15 };
      const keys = Array.from({ length: 6 }, (_, i) => ({ id: `${run}:key_${i}`, limit: 100 }));
      const decisions = await Promise.all(
        Array.from({ length: 48 }, (_, i) => {
          const key = keys[i % keys.length]!;
          return next()
            .consume(i % 3 === 0 ? [org, key] : [key, org])()
            .then((d) => ({ key, d }));
        }),
      );
      const admitted = decisions.filter((x) => x.d.allowed);
      expect(admitted).toHaveLength(15);
      // The org bucket is the constrained one, and is the one reported.
      for (const { d } of decisions) expect(d.limit).toBe(15);
      // Each key was charged for its admitted calls only: alone, it has exactly the rest of its limit.
      for (const key of keys) {
        const charged = admitted.filter((x) => x.key === key).length;
        expect(await next().consume([key])()).toMatchObject({ allowed: true, remaining: key.limit - charged - 1 });
      }
    });

    it('does not charge the key when the organization bucket refuses', async () => {
      const clock = freshClock();
      const next = opened(60_000, clock);
      const run = freshRun();
      const org = { id: `${run}:org_1`, limit: 2 };
      const key1 = { id: `${run}:key_1`, limit: 3 };
      expect((await next().consume([key1, org])()).allowed).toBe(true);
      expect((await next().consume([{ id: `${run}:key_2`, limit: 3 }, org])()).allowed).toBe(true);
      for (let i = 0; i < 5; i++) expect((await next().consume([key1, org])()).allowed).toBe(false);
      // key_1 was charged once only: alone, it still has two calls.
      expect(await next().consume([key1])()).toMatchObject({ allowed: true, remaining: 1 });
    });

    it('with no buckets, allows', async () => {
      const next = opened(60_000, freshClock());
      expect(await next().consume([])()).toMatchObject({ allowed: true, retryAfterS: 0 });
    });
  });
};
