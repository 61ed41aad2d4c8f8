import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';
import { rateLimit } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type pg from 'pg';
import { isLostRace, prepared } from './connection.js';
import { Int, Int8, decode, nullable } from './decode.js';

/** What `esig_rate_limit_consume_many` (migrations 0004 and 0010) says of one bucket. */
const BucketRow = t.type({
  bucket: t.string,
  used: Int8,
  oldest_ms: nullable(Int8),
  must_expire_ms: nullable(Int8),
  // How many of the statement's calls were admitted, the same in every row.
  admitted: Int,
  now_ms: Int8,
});
export type BucketRow = t.TypeOf<typeof BucketRow>;

// Prepared: every request runs it (the function's own statements are planned once per session anyway).
const CONSUME = prepared('rate_limit_consume_one', 'SELECT * FROM esig_rate_limit_consume_many($1::text[], $2::integer[], $3::bigint, $4::bigint, 1)');
const SWEEP_SQL = 'SELECT esig_rate_limit_sweep($1::bigint)';

/** Attempts of one `consume` that lost a race the server broke (deadlock, lock timeout) before giving up. */
export const ATTEMPTS = 3;

/**
 * Removes buckets idle for a whole window, at most once a window per limiter: best effort, off the request's
 * path (a failed sweep leaves rows for the next one).
 */
export const createSweeper = (pool: pg.Pool, windowMs: number) => {
  let lastSweep = Number.NEGATIVE_INFINITY;
  return (now: number): void => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    pool.query(SWEEP_SQL, [now - windowMs]).catch(() => undefined);
  };
};

export const decodeRows = (rows: readonly unknown[]): readonly BucketRow[] =>
  rows.map((row) => {
    const r = decode(BucketRow, 'esig_rate_limit_consume_many row')(row);
    // The RowDecodeError itself: this port reports failures by rejecting.
    if (E.isLeft(r)) throw r.left._tag === 'StoreFailure' ? r.left.cause : new Error('undecodable esig_rate_limit_consume_many row');
    return r.right;
  });

/**
 * The sliding-window RateLimiter shared by every process on the database, with the decisions of the
 * in-memory limiter (both run @esig/testkit's rate limiter contract). A call is one statement: the
 * `esig_rate_limit_consume_many` function locks its buckets' rows in a fixed order, decides, and records the
 * call in every bucket only if every bucket admits it; a refused call writes nothing. The locks live only
 * as long as that statement, so a busy bucket's calls queue for microseconds rather than round trips, and
 * each costs O(1) rows however high the limit. The tables are UNLOGGED (see the migration for the trade).
 *
 * Time is `clock` when given (tests), otherwise the database's clock, so that processes on different
 * hosts agree. A call's time is never earlier than the newest call recorded in its buckets.
 *
 * The port has no error channel: when the database fails, the Task rejects (the HTTP adapter answers 500).
 */
export const createPgRateLimiter = (pool: pg.Pool, windowMs: number, clock?: Clock): RateLimiter => {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const sweep = createSweeper(pool, windowMs);

  const decideOnce = async (buckets: readonly RateBucket[]): Promise<RateDecision> => {
    // One row per bucket id. A bucket named twice is held to its lower limit (the one that refuses first);
    // each named bucket still reports against its own limit below.
    const limits = new Map<string, number>();
    for (const b of buckets) {
      if (!Number.isSafeInteger(b.limit) || b.limit < 1) throw new RangeError(`rate limit of ${b.id} must be a positive integer, got ${b.limit}`);
      limits.set(b.id, Math.min(b.limit, limits.get(b.id) ?? Number.POSITIVE_INFINITY));
    }
    // Every caller locks in this order, so callers whose bucket sets overlap cannot deadlock.
    const ids = [...limits.keys()].sort();
    const res = await pool.query({ ...CONSUME, values: [ids, ids.map((id) => limits.get(id)!), windowMs, clock === undefined ? null : clock.now().getTime()] });
    const rows = new Map(decodeRows(res.rows).map((r) => [r.bucket, r]));
    if (rows.size !== ids.length) throw new Error(`esig_rate_limit_consume_many answered for ${rows.size} of ${ids.length} buckets`);
    // The time decided at, the same in every row.
    const now = rows.get(ids[0]!)!.now_ms;
    sweep(now);
    // A bucket named twice with two limits was held to the lower one; each reports against its own.
    const state = buckets.map((b) => {
      const r = rows.get(b.id)!;
      return { limit: b.limit, used: r.used, oldestMs: r.oldest_ms, mustExpireMs: r.must_expire_ms };
    });
    return rateLimit.decide(state, now, { windowMs });
  };

  return {
    consume: (buckets) => async () => {
      // Nothing to count against: no statement needed.
      if (buckets.length === 0) return rateLimit.decide([], 0, { windowMs });
      for (let attempt = 1; ; attempt++) {
        try {
          return await decideOnce(buckets);
        } catch (e) {
          if (attempt >= ATTEMPTS || !isLostRace(e)) throw e;
        }
      }
    },
  };
};
