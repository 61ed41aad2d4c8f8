import type { Task } from 'fp-ts/lib/Task.js';

/** One counter to charge: an identity (a key, an org, a client address) and its limit per window. */
export interface RateBucket {
  readonly id: string;
  readonly limit: number;
}

export interface RateDecision {
  readonly allowed: boolean;
  /** The limit of the most constrained bucket. */
  readonly limit: number;
  /** Calls left in the most constrained bucket after this one. */
  readonly remaining: number;
  /** Seconds until the most constrained bucket regains a call. */
  readonly resetS: number;
  /** Seconds to wait before retrying; 0 when allowed. */
  readonly retryAfterS: number;
}

/**
 * Sliding-window rate limiting over several buckets at once. A call is counted in every bucket only if
 * every bucket admits it (a refused call costs nothing), and concurrent calls never overshoot a limit.
 */
export interface RateLimiter {
  consume(buckets: readonly RateBucket[]): Task<RateDecision>;
}
