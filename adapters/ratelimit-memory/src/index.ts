import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';

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
      // Nothing to count against: nothing can refuse the call.
      if (buckets.length === 0) return { allowed: true, limit: 0, remaining: 0, resetS: Math.max(1, Math.ceil(windowMs / 1000)), retryAfterS: 0 };
      const now = clock.now().getTime();
      sweep(now);
      const state = buckets.map((b) => {
        let ring = rings.get(b.id);
        if (ring === undefined) rings.set(b.id, (ring = new WindowRing()));
        ring.prune(now - windowMs);
        const allowed = ring.count < b.limit;
        // When full, the call admitted `limit` calls ago must leave the window before another fits.
        const waitMs = allowed ? 0 : Math.max(1, ring.at(ring.count - b.limit) + windowMs - now);
        return { b, ring, allowed, waitMs, remaining: allowed ? b.limit - ring.count - 1 : 0 };
      });
      const allowed = state.every((s) => s.allowed);
      if (allowed) for (const s of state) s.ring.push(now);
      // Report the bucket closest to its limit: that is the one a client must pace itself by.
      let worst = state[0]!;
      for (const s of state) if (s.remaining < worst.remaining || (!s.allowed && worst.allowed)) worst = s;
      const resetMs = worst.ring.count === 0 ? windowMs : worst.ring.at(0) + windowMs - now;
      return {
        allowed,
        limit: worst.b.limit,
        remaining: worst.remaining,
        resetS: Math.max(1, Math.ceil(resetMs / 1000)),
        retryAfterS: allowed ? 0 : Math.max(1, Math.ceil(Math.max(...state.map((s) => s.waitMs)) / 1000)),
      };
    },
  };
};
