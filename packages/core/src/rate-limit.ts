import type { RateDecision } from './ports/rate-limiter.js';

/**
 * Sliding-window log arithmetic, exact: a bucket admits a call when fewer than `limit` calls were admitted
 * in the last `windowMs`. Pure functions over plain arrays, so any RateLimiter adapter (in memory, SQL,
 * Redis) can share the rule and its property tests.
 */
export interface WindowConfig {
  readonly windowMs: number;
}

/** Admitted call times of one bucket, ascending. */
export type WindowLog = readonly number[];

/** Drops the entries that have left the window ending at `now`. */
export const prune = (log: WindowLog, now: number, cfg: WindowConfig): WindowLog => {
  let i = 0;
  while (i < log.length && log[i]! <= now - cfg.windowMs) i++;
  return i === 0 ? log : log.slice(i);
};

export interface BucketCheck {
  readonly allowed: boolean;
  readonly remaining: number;
  /** Milliseconds until the bucket regains one call (0 when it is not full). */
  readonly waitMs: number;
}

/** Whether a pruned log admits one more call now, without recording it. */
export const check = (log: WindowLog, limit: number, now: number, cfg: WindowConfig): BucketCheck => {
  if (log.length < limit) return { allowed: true, remaining: limit - log.length - 1, waitMs: 0 };
  const oldestThatMustExpire = log[log.length - limit]!;
  return { allowed: false, remaining: 0, waitMs: Math.max(1, oldestThatMustExpire + cfg.windowMs - now) };
};

/** Records an admitted call. */
export const record = (log: WindowLog, now: number): WindowLog => [...log, now];

/** One bucket's state at a call, as an adapter read it (before recording the call). */
export interface BucketState {
  readonly limit: number;
  /** Calls in the window before this one. */
  readonly used: number;
  /** The oldest of those calls, or null when there are none. */
  readonly oldestMs: number | null;
  /** When the bucket is full (`used >= limit`): the call `limit` places back, which must leave the window first. */
  readonly mustExpireMs: number | null;
}

/**
 * The decision for one call from its buckets' states at time `now`: admitted only if every bucket has
 * room; reported against the bucket closest to its limit (the one a client must pace itself by); told to
 * wait for the slowest full bucket. Adapters find the states their own way and share this arithmetic.
 */
export const decide = (buckets: readonly BucketState[], now: number, cfg: WindowConfig): RateDecision => {
  const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
  // Nothing to count against: nothing can refuse the call.
  if (buckets.length === 0) return { allowed: true, limit: 0, remaining: 0, resetS: seconds(cfg.windowMs), retryAfterS: 0 };
  const state = buckets.map((b) => {
    const full = b.used >= b.limit;
    return { b, full, remaining: full ? 0 : b.limit - b.used - 1, waitMs: full ? Math.max(1, (b.mustExpireMs ?? now) + cfg.windowMs - now) : 0 };
  });
  const allowed = state.every((s) => !s.full);
  let worst = state[0]!;
  for (const s of state) if (s.remaining < worst.remaining || (s.full && !worst.full)) worst = s;
  // The worst bucket's oldest call once this one is decided: the call itself when its window was empty.
  const oldest = worst.b.oldestMs ?? (allowed ? now : null);
  return {
    allowed,
    limit: worst.b.limit,
    remaining: worst.remaining,
    resetS: seconds(oldest === null ? cfg.windowMs : oldest + cfg.windowMs - now),
    retryAfterS: allowed ? 0 : seconds(Math.max(...state.map((s) => s.waitMs))),
  };
};
