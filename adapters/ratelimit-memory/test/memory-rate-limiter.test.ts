import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RateBucket } from '@esig/core';
import { createManualClock } from '@esig/testkit';
import { createMemoryRateLimiter } from '../src/index';

const START = '2025-01-01T00:00:00.000Z';

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
  // Large enough limits that the ring buffers grow (past 8, 16, 32 entries) while wrapped around.
  keyLimit: fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 25 })),
  orgLimit: fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 40 })),
  orgFirst: fc.boolean(),
});

/** The model: admitted call times per bucket. */
const used = (log: readonly number[], now: number, windowMs: number) => log.filter((t) => t > now - windowMs);

describe('createMemoryRateLimiter', () => {
  it('matches a sliding-window model over two buckets: counted in both or neither, never over a limit', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, callsArb, async ({ windowMs, keyLimit, orgLimit, orgFirst }, calls) => {
        const clock = createManualClock(START);
        const limiter = createMemoryRateLimiter(clock, windowMs);
        const model = new Map<string, number[]>();
        for (const call of calls) {
          clock.advance(call.gap === 'window' ? windowMs : call.gap === 'window-1' ? windowMs - 1 : call.gap);
          const now = clock.now().getTime();
          const key: RateBucket = { id: call.key, limit: Math.max(1, keyLimit + call.shift) };
          const org: RateBucket = { id: 'org_1', limit: orgLimit };
          const buckets = orgFirst ? [org, key] : [key, org];
          const logs = buckets.map((b) => used(model.get(b.id) ?? [], now, windowMs));
          const free = buckets.map((b, i) => b.limit - logs[i]!.length);
          const expectAllowed = free.every((f) => f > 0);

          const d = await limiter.consume(buckets)();
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
        const org = model.get('org_1') ?? [];
        for (const t of org) expect(org.filter((u) => u > t - windowMs && u <= t).length).toBeLessThanOrEqual(orgLimit);
      }),
      { numRuns: 200 },
    );
  });

  it('admits again exactly when the oldest call leaves the window, and Retry-After rounds that up', async () => {
    await fc.assert(
      fc.asyncProperty(configArb, fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 20 }), async ({ windowMs, keyLimit }, gaps) => {
        const clock = createManualClock(START);
        const limiter = createMemoryRateLimiter(clock, windowMs);
        const b = [{ id: 'key_1', limit: keyLimit }];
        const admitted: number[] = [];
        for (const gap of gaps) {
          clock.advance(gap);
          if ((await limiter.consume(b)()).allowed) admitted.push(clock.now().getTime());
        }
        // Fill the bucket, then get refused.
        let d = await limiter.consume(b)();
        while (d.allowed) {
          admitted.push(clock.now().getTime());
          d = await limiter.consume(b)();
        }
        const now = clock.now().getTime();
        const window = admitted.filter((t) => t > now - windowMs);
        const exactWait = window[window.length - keyLimit]! + windowMs - now;
        expect(d.retryAfterS).toBe(Math.max(1, Math.ceil(exactWait / 1000)));
        clock.set(new Date(now + exactWait - 1));
        expect((await limiter.consume(b)()).allowed).toBe(false);
        clock.set(new Date(now + exactWait));
        expect((await limiter.consume(b)()).allowed).toBe(true);
      }),
      { numRuns: 100 },
    );
  });

  it('asks to wait for the slowest refusing bucket, whatever the order of the buckets', async () => {
    const clock = createManualClock(START);
    const limiter = createMemoryRateLimiter(clock, 60_000);
    const org = { id: 'org_1', limit: 2 };
    const key = { id: 'key_1', limit: 1 };
    await limiter.consume([org, { id: 'key_2', limit: 5 }])();
    clock.advance(30_000);
    await limiter.consume([org, key])();
    clock.advance(1_000);
    // The org bucket frees a call in 29 s, the key bucket in 59 s.
    expect(await limiter.consume([org, key])()).toMatchObject({ allowed: false, retryAfterS: 59 });
    expect(await limiter.consume([key, org])()).toMatchObject({ allowed: false, retryAfterS: 59 });
  });

  it('never overshoots with many concurrent calls', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 1, max: 60 }), async (limit, n) => {
        const clock = createManualClock(START);
        const limiter = createMemoryRateLimiter(clock, 60_000);
        const results = await Promise.all(Array.from({ length: n }, () => limiter.consume([{ id: 'key_1', limit }])()));
        expect(results.filter((r) => r.allowed)).toHaveLength(Math.min(limit, n));
      }),
    );
  });

  it('does not charge the key when the organization bucket refuses', async () => {
    const clock = createManualClock(START);
    const limiter = createMemoryRateLimiter(clock, 60_000);
    const org = { id: 'org_1', limit: 2 };
    expect((await limiter.consume([{ id: 'key_1', limit: 3 }, org])()).allowed).toBe(true);
    expect((await limiter.consume([{ id: 'key_2', limit: 3 }, org])()).allowed).toBe(true);
    for (let i = 0; i < 5; i++) expect((await limiter.consume([{ id: 'key_1', limit: 3 }, org])()).allowed).toBe(false);
    // key_1 was charged once only: alone, it still has two calls.
    const alone = await limiter.consume([{ id: 'key_1', limit: 3 }])();
    expect(alone).toMatchObject({ allowed: true, remaining: 1 });
  });
});
