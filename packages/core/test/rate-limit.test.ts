import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rateLimit } from '@esig/core';
import { gapsArb, limitArb, windowMsArb } from './arbitraries.js';

const START = 1_000_000;

/** Calls admitted in the window ending at `now`: (now - windowMs, now]. */
const inWindow = (admitted: readonly number[], now: number, windowMs: number) =>
  admitted.filter((t) => t > now - windowMs && t <= now).length;

describe('sliding-window arithmetic', () => {
  it('admits a call exactly when fewer than `limit` were admitted in the last window, and records only those', () => {
    fc.assert(
      fc.property(windowMsArb, limitArb, gapsArb, (windowMs, limit, gaps) => {
        const cfg = { windowMs };
        let log: rateLimit.WindowLog = [];
        const admitted: number[] = [];
        let now = START;
        for (const gap of gaps) {
          now += gap;
          const pruned = rateLimit.prune(log, now, cfg);
          expect(pruned).toEqual(log.filter((t) => t > now - windowMs));
          const c = rateLimit.check(pruned, limit, now, cfg);
          const used = inWindow(admitted, now, windowMs);
          expect(c.allowed).toBe(used < limit);
          if (c.allowed) {
            expect(c.remaining).toBe(limit - used - 1);
            expect(c.waitMs).toBe(0);
            log = rateLimit.record(pruned, now);
            admitted.push(now);
          } else {
            expect(c.remaining).toBe(0);
            // A refused call leaves the log as it was.
            log = pruned;
          }
        }
        // No window of `windowMs` ever holds more than `limit` admitted calls.
        for (const t of admitted) expect(inWindow(admitted, t, windowMs)).toBeLessThanOrEqual(limit);
      }),
      { numRuns: 500 },
    );
  });

  it('gives an exact wait: admitted at now + waitMs, refused at now + waitMs - 1', () => {
    fc.assert(
      fc.property(windowMsArb, limitArb, gapsArb, (windowMs, limit, gaps) => {
        const cfg = { windowMs };
        const allowedAt = (log: rateLimit.WindowLog, t: number) => rateLimit.check(rateLimit.prune(log, t, cfg), limit, t, cfg).allowed;
        let log: rateLimit.WindowLog = [];
        let now = START;
        for (const gap of gaps) {
          now += gap;
          log = rateLimit.prune(log, now, cfg);
          const c = rateLimit.check(log, limit, now, cfg);
          if (c.allowed) {
            log = rateLimit.record(log, now);
            continue;
          }
          expect(c.waitMs).toBeGreaterThanOrEqual(1);
          expect(c.waitMs).toBeLessThanOrEqual(windowMs);
          expect(allowedAt(log, now + c.waitMs)).toBe(true);
          expect(allowedAt(log, now + c.waitMs - 1)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('stays exact when the limit changes between calls (a lowered limit leaves more entries than it allows)', () => {
    fc.assert(
      fc.property(windowMsArb, fc.array(fc.tuple(fc.integer({ min: 0, max: 3_000 }), limitArb), { maxLength: 80 }), (windowMs, calls) => {
        const cfg = { windowMs };
        let log: rateLimit.WindowLog = [];
        const admitted: number[] = [];
        let now = START;
        for (const [gap, limit] of calls) {
          now += gap;
          log = rateLimit.prune(log, now, cfg);
          const c = rateLimit.check(log, limit, now, cfg);
          expect(c.allowed).toBe(inWindow(admitted, now, windowMs) < limit);
          if (c.allowed) {
            log = rateLimit.record(log, now);
            admitted.push(now);
            continue;
          }
          const allowedAt = (t: number) => rateLimit.check(rateLimit.prune(log, t, cfg), limit, t, cfg).allowed;
          expect(allowedAt(now + c.waitMs)).toBe(true);
          expect(allowedAt(now + c.waitMs - 1)).toBe(false);
        }
      }),
      { numRuns: 500 },
    );
  });

  it('fills a window to exactly `limit` with a burst', () => {
    fc.assert(
      fc.property(windowMsArb, limitArb, fc.integer({ min: 1, max: 30 }), (windowMs, limit, extra) => {
        const cfg = { windowMs };
        let log: rateLimit.WindowLog = [];
        let admitted = 0;
        for (let i = 0; i < limit + extra; i++) {
          const c = rateLimit.check(log, limit, START, cfg);
          if (c.allowed) {
            log = rateLimit.record(log, START);
            admitted++;
          } else expect(c.waitMs).toBe(windowMs);
        }
        expect(admitted).toBe(limit);
      }),
    );
  });

  it('decides a call over several buckets as their checks say: admitted only if all admit, the closest to its limit reported, the slowest waited for', () => {
    const bucketArb = fc.record({ limit: limitArb, times: fc.array(fc.integer({ min: 0, max: 120_000 }), { maxLength: 40 }) });
    fc.assert(
      fc.property(windowMsArb, fc.array(bucketArb, { maxLength: 4 }), (windowMs, buckets) => {
        const cfg = { windowMs };
        const now = START + 120_000;
        const logs = buckets.map((b) => rateLimit.prune([...b.times].sort((x, y) => x - y).map((t) => START + t), now, cfg));
        const checks = buckets.map((b, i) => rateLimit.check(logs[i]!, b.limit, now, cfg));
        const states = buckets.map((b, i) => {
          const log = logs[i]!;
          return { limit: b.limit, used: log.length, oldestMs: log[0] ?? null, mustExpireMs: log.length >= b.limit ? log[log.length - b.limit]! : null };
        });
        const d = rateLimit.decide(states, now, cfg);

        const allowed = checks.every((c) => c.allowed);
        expect(d.allowed).toBe(allowed);
        if (buckets.length === 0) {
          expect(d).toEqual({ allowed: true, limit: 0, remaining: 0, resetS: Math.max(1, Math.ceil(windowMs / 1000)), retryAfterS: 0 });
          return;
        }
        expect(d.remaining).toBe(Math.min(...checks.map((c) => c.remaining)));
        expect(d.retryAfterS).toBe(allowed ? 0 : Math.max(1, Math.ceil(Math.max(...checks.map((c) => c.waitMs)) / 1000)));
        // The reported bucket: a refusing one if any, else the one with the fewest calls left; the first such.
        const worst = allowed ? checks.findIndex((c) => c.remaining === d.remaining) : checks.findIndex((c) => !c.allowed);
        expect(d.limit).toBe(buckets[worst]!.limit);
        // Its window resets when its oldest call (this one, if admitted into an empty window) leaves.
        const after = allowed ? rateLimit.record(logs[worst]!, now) : logs[worst]!;
        expect(d.resetS).toBe(Math.max(1, Math.ceil((after.length === 0 ? windowMs : after[0]! + windowMs - now) / 1000)));
      }),
      { numRuns: 1_000 },
    );
  });
});
