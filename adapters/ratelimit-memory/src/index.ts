import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';
import { rateLimit } from '@esig/core';

/**
 * The admitted call times of one bucket, oldest first, in a ring buffer. It never needs more than `limit`
 * entries (a full window refuses further calls), so it grows by doubling up to that and stays there; each
 * call costs amortized O(1), where copying a log per call would cost O(limit). Its decisions are those of
 * the pure rule in @esig/core's rate-limit module (the tests check the two agree).
 */
class WindowRing {
  private buf = new Float64Array(8);
  private head = 0;
  count = 0;

  /** Drops the entries at or before `cutoff`. */
  prune(cutoff: number) {
    while (this.count > 0 && this.buf[this.head]! <= cutoff) {
      this.head = (this.head + 1) % this.buf.length;
      this.count--;
    }
  }

  /** The entry `i` places after the oldest. */
  at(i: number): number {
    return this.buf[(this.head + i) % this.buf.length]!;
  }

  push(t: number) {
    if (this.count === this.buf.length) {
      const grown = new Float64Array(this.buf.length * 2);
      for (let i = 0; i < this.count; i++) grown[i] = this.at(i);
      this.buf = grown;
      this.head = 0;
    }
    this.buf[(this.head + this.count) % this.buf.length] = t;
    this.count++;
  }
}

/**
 * The sliding-window limiter for one process. Each `consume` runs synchronously inside the event loop, so
 * checking and recording every bucket is atomic without locks. Several processes need a shared limiter;
 * this one is for the single-process default.
 */
export const createMemoryRateLimiter = (clock: Clock, windowMs: number): RateLimiter => {
  const rings = new Map<string, WindowRing>();
  let lastSweep = 0;

  // Buckets of idle clients would otherwise stay forever; sweeping once per window bounds the map by the
  // number of clients active in the last two windows.
  const sweep = (now: number) => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    for (const [id, ring] of rings) {
      ring.prune(now - windowMs);
      if (ring.count === 0) rings.delete(id);
    }
  };

  return {
    consume: (buckets: readonly RateBucket[]) => async (): Promise<RateDecision> => {
      const now = clock.now().getTime();
      sweep(now);
      const cutoff = now - windowMs;
      const state = buckets.map((b) => {
        let ring = rings.get(b.id);
        if (ring === undefined) rings.set(b.id, (ring = new WindowRing()));
        ring.prune(cutoff);
        const full = ring.count >= b.limit;
        return {
          ring,
          limit: b.limit,
          used: ring.count,
          oldestMs: ring.count === 0 ? null : ring.at(0),
          // When full, the call admitted `limit` calls ago must leave the window before another fits.
          mustExpireMs: full ? ring.at(ring.count - b.limit) : null,
        };
      });
      const decision = rateLimit.decide(state, now, { windowMs });
      // Once per bucket, even when a caller names a bucket twice.
      if (decision.allowed) for (const ring of new Set(state.map((s) => s.ring))) ring.push(now);
      return decision;
    },
  };
};
