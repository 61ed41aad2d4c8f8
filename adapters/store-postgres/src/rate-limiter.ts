import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';
import { rateLimit } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import type pg from 'pg';
import { isLostRace, prepared } from './connection.js';
import { createLanes } from './lanes.js';
import { Int, Int8, decode, nullable, rowType } from './decode.js';

/** What `esig_rate_limit_consume_many` (migrations 0004 and 0010) says of one bucket. */
const BucketRow = rowType({
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
const CONSUME = prepared('rate_limit_consume_many', 'SELECT * FROM esig_rate_limit_consume_many($1::text[], $2::integer[], $3::bigint, $4::bigint, $5::integer)');
const SWEEP_SQL = 'SELECT esig_rate_limit_sweep($1::bigint)';

/** The highest limit a bucket can have: the function takes limits as PostgreSQL `integer`s. */
export const MAX_LIMIT = 2_147_483_647;
export const isLimit = (n: number): boolean => Number.isSafeInteger(n) && n >= 1 && n <= MAX_LIMIT;

/** Most calls one statement decides; the rest wait for the next. Bounds the rows one statement writes. */
export const MAX_BATCH = 256;

/** Attempts of one statement that lost a race the server broke (deadlock, lock timeout) before giving up. */
const ATTEMPTS = 3;

/**
 * `statement` run again when it lost a race the server broke (a bucket swept while being locked, a
 * deadlock): such a statement wrote nothing. Anything else, or a third lost race, rejects.
 */
export const retryingLostRaces = async <A>(statement: () => Promise<A>): Promise<A> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await statement();
    } catch (e) {
      if (attempt >= ATTEMPTS || !isLostRace(e)) throw e;
    }
  }
};

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
 * The decisions of a batch's calls, from what the statement said of their buckets (`rows`, by bucket id):
 * call `i` decided at the batch's time, after the calls before it. The first `admitted` see those before them
 * as used; the rest are refused, each bucket as it stands once the admitted calls are in. These are the
 * decisions the calls would get one after another at that time (a property test checks it). Each call
 * reports against its own buckets' limits.
 */
export const batchDecisions = (rows: ReadonlyMap<string, BucketRow>, calls: readonly (readonly RateBucket[])[], windowMs: number): RateDecision[] => {
  // The same in every row.
  const { admitted, now_ms: now } = rows.values().next().value as BucketRow;
  return calls.map((buckets, i) => {
    const before = Math.min(i, admitted);
    const state = buckets.map((b): rateLimit.BucketState => {
      const r = rows.get(b.id)!;
      return {
        limit: b.limit,
        used: r.used + before,
        // When the window was empty before the batch, its oldest call is the batch's first, at `now`: what
        // `decide` takes a null for.
        oldestMs: r.oldest_ms,
        // Given by the statement for a bucket full once the admitted calls are in, when a call was refused;
        // `decide` reads it only for a full bucket, so only for the refused calls.
        mustExpireMs: r.must_expire_ms,
      };
    });
    return rateLimit.decide(state, now, { windowMs });
  });
};

/**
 * The sliding-window RateLimiter shared by every process on the database, with the decisions of the
 * in-memory limiter (both run @esig/testkit's rate limiter contract). A call is one statement: the
 * `esig_rate_limit_consume_many` function locks its buckets' rows in a fixed order, decides, and records the
 * call in every bucket only if every bucket admits it; a refused call writes nothing. The locks live only
 * as long as that statement, so a busy bucket's calls queue for microseconds rather than round trips, and
 * each costs O(1) rows however high the limit. The tables are UNLOGGED (see the migration for the trade).
 * Calls over the same buckets that arrive while one of theirs is out go together in the next statement
 * (lanes.ts), decided as they would be one by one.
 *
 * Time is `clock` when given (tests), otherwise the database's clock, so that processes on different
 * hosts agree. A call's time is never earlier than the newest call recorded in its buckets.
 *
 * The port has no error channel: when the database fails, the Task rejects (the HTTP adapter answers 500).
 */
export const createPgRateLimiter = (pool: pg.Pool, windowMs: number, clock?: Clock): RateLimiter => {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const sweep = createSweeper(pool, windowMs);

  /** Calls over the same buckets and limits: `ids` sorted, `limits` theirs. */
  const decideOnce = async (ids: readonly string[], limits: readonly number[], calls: readonly (readonly RateBucket[])[]): Promise<RateDecision[]> => {
    const res = await pool.query({ values: [ids, limits, windowMs, clock === undefined ? null : clock.now().getTime(), calls.length], ...CONSUME });
    const rows = new Map(decodeRows(res.rows).map((r) => [r.bucket, r]));
    if (rows.size !== ids.length) throw new Error(`esig_rate_limit_consume_many answered for ${rows.size} of ${ids.length} buckets`);
    sweep(rows.get(ids[0]!)!.now_ms);
    return batchDecisions(rows, calls, windowMs);
  };

  // Calls over the same buckets and limits share a lane: one statement out at a time (see lanes.ts).
  const consume = createLanes(MAX_BATCH, (calls: readonly { ids: readonly string[]; limits: readonly number[]; buckets: readonly RateBucket[] }[]) =>
    retryingLostRaces(() =>
      decideOnce(
        calls[0]!.ids,
        calls[0]!.limits,
        calls.map((c) => c.buckets),
      ),
    ),
  );

  return {
    consume: (buckets) => () => {
      // Nothing to count against: no statement needed.
      if (buckets.length === 0) return Promise.resolve(rateLimit.decide([], 0, { windowMs }));
      // One row per bucket id. A bucket named twice is held to its lower limit (the one that refuses first);
      // each named bucket still reports against its own limit.
      const lowest = new Map<string, number>();
      for (const b of buckets) {
        if (!isLimit(b.limit)) return Promise.reject(new RangeError(`rate limit of ${b.id} must be an integer from 1 to ${MAX_LIMIT}, got ${b.limit}`));
        lowest.set(b.id, Math.min(b.limit, lowest.get(b.id) ?? Number.POSITIVE_INFINITY));
      }
      // Every caller locks in this order, so callers whose bucket sets overlap cannot deadlock.
      const ids = [...lowest.keys()].sort();
      const limits = ids.map((id) => lowest.get(id)!);
      return consume(JSON.stringify([ids, limits]), { ids, limits, buckets });
    },
  };
};
