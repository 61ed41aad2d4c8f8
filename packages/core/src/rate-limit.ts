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
