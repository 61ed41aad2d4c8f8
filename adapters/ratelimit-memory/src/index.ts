import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';
import { rateLimit } from '@esig/core';

/**
 * The sliding-window limiter for one process. Each `consume` runs synchronously inside the event loop, so
 * checking and recording every bucket is atomic without locks. Several processes need a shared limiter
 * (see the PostgreSQL adapter); this one is for the embedded single-process default.
 */
export const createMemoryRateLimiter = (clock: Clock, windowMs: number): RateLimiter => {
  const logs = new Map<string, rateLimit.WindowLog>();
  const cfg = { windowMs };
  let lastSweep = 0;

  // Buckets of idle clients would otherwise stay forever; sweeping once per window bounds the map by the
  // number of clients active in the last two windows.
  const sweep = (now: number) => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    for (const [id, log] of logs) {
      const pruned = rateLimit.prune(log, now, cfg);
      if (pruned.length === 0) logs.delete(id);
      else logs.set(id, pruned);
    }
  };

  return {
    consume: (buckets: readonly RateBucket[]) => async (): Promise<RateDecision> => {
      const now = clock.now().getTime();
      sweep(now);
      const pruned = buckets.map((b) => rateLimit.prune(logs.get(b.id) ?? [], now, cfg));
      const checks = buckets.map((b, i) => rateLimit.check(pruned[i]!, b.limit, now, cfg));
      const allowed = checks.every((c) => c.allowed);
      buckets.forEach((b, i) => logs.set(b.id, allowed ? rateLimit.record(pruned[i]!, now) : pruned[i]!));
      // Report the bucket closest to its limit: that is the one a client must pace itself by.
      let worst = 0;
      checks.forEach((c, i) => {
        if (c.remaining < checks[worst]!.remaining || (!c.allowed && checks[worst]!.allowed)) worst = i;
      });
      const w = checks[worst]!;
      const oldest = pruned[worst]![0];
      const resetMs = oldest === undefined ? windowMs : oldest + windowMs - now;
      return {
        allowed,
        limit: buckets[worst]!.limit,
        remaining: allowed ? w.remaining : 0,
        resetS: Math.max(1, Math.ceil(resetMs / 1000)),
        retryAfterS: allowed ? 0 : Math.max(1, Math.ceil(Math.max(...checks.map((c) => c.waitMs)) / 1000)),
      };
    },
  };
};
