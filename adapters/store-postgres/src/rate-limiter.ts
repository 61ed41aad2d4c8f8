import type { Clock, RateBucket, RateDecision, RateLimiter } from '@esig/core';
import { rateLimit } from '@esig/core';
import * as E from 'fp-ts/Either';
import * as t from 'io-ts';
import type pg from 'pg';
import { isLostRace } from './connection';
import { Int8, decode } from './decode';

const WindowRow = t.type({ bucket: t.string, hits: t.readonlyArray(Int8), now_ms: Int8 });
type WindowRow = t.TypeOf<typeof WindowRow>;

// Rows in bucket order (LockRows runs above the sort), so that consumers whose bucket sets overlap lock
// them in the same order and cannot deadlock each other. The database's clock is read in the same statement.
const LOCK_SQL = `SELECT bucket, hits, floor(extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now_ms
  FROM rate_limit_windows WHERE bucket = ANY($1::text[]) ORDER BY bucket FOR UPDATE`;
const CREATE_SQL = `INSERT INTO rate_limit_windows (bucket, hits)
  SELECT b, '{}' FROM unnest($1::text[]) AS b ORDER BY b COLLATE "C" ON CONFLICT DO NOTHING`;
const SAVE_SQL = `UPDATE rate_limit_windows AS w SET hits = u.hits::bigint[]
  FROM unnest($1::text[], $2::text[]) AS u(bucket, hits) WHERE w.bucket = u.bucket`;
// Buckets nobody used for a whole window hold nothing that still counts.
const SWEEP_SQL = 'DELETE FROM rate_limit_windows WHERE cardinality(hits) = 0 OR hits[cardinality(hits)] <= $1';

/** Attempts of one `consume` that lost a race the server broke (deadlock, lock timeout) before giving up. */
const ATTEMPTS = 3;

const decodeRows = (rows: readonly unknown[]): readonly WindowRow[] => {
  const out: WindowRow[] = [];
  for (const row of rows) {
    const r = decode(WindowRow, 'rate_limit_windows row')(row);
    // The RowDecodeError itself: this port reports failures by rejecting.
    if (E.isLeft(r)) throw r.left._tag === 'StoreFailure' ? r.left.cause : new Error('undecodable rate_limit_windows row');
    out.push(r.right);
  }
  return out;
};

/**
 * The sliding-window RateLimiter shared by every process on the database: the same decisions as the
 * in-memory limiter (the rule is @esig/core's `rateLimit`), made one at a time per bucket. Each `consume`
 * is one transaction that locks its buckets' rows (creating missing ones), decides, and records the call
 * in every bucket only if every bucket admits it; a refused call writes nothing.
 *
 * Time is `clock` when given (tests), otherwise the database's clock, so that processes on different
 * hosts agree. A call's time is never earlier than the newest call recorded in its buckets: a consumer
 * that read the clock and then waited for a lock would otherwise record out of order.
 *
 * The port has no error channel: when the database fails, the Task rejects (the HTTP adapter answers 500).
 */
export const createPgRateLimiter = (pool: pg.Pool, windowMs: number, clock?: Clock): RateLimiter => {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const cfg = { windowMs };
  let lastSweep = Number.NEGATIVE_INFINITY;

  const sweep = (now: number) => {
    if (now - lastSweep < windowMs) return;
    lastSweep = now;
    // Best effort, off the request's path: a failed sweep leaves rows for the next one.
    pool.query(SWEEP_SQL, [now - windowMs]).catch(() => undefined);
  };

  /**
   * Opens the transaction with every bucket's row locked. Rows are created in a statement of their own,
   * outside the transaction: inserting while holding locks on other buckets would take locks out of
   * order (a consumer that locked an existing `org:` row and then inserts `key:…` can wait for one that
   * inserted that key first and now waits for the `org:` row), and PostgreSQL would break the deadlock.
   */
  const lockAll = async (client: pg.PoolClient, ids: readonly string[]): Promise<readonly WindowRow[]> => {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    const first = decodeRows((await client.query(LOCK_SQL, [ids])).rows);
    if (first.length === ids.length) return first;
    await client.query('ROLLBACK');
    await client.query(CREATE_SQL, [ids]);
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    const second = decodeRows((await client.query(LOCK_SQL, [ids])).rows);
    // Only a sweep deleting a just-created row between the two statements gets here; try again.
    if (second.length !== ids.length) throw Object.assign(new Error('rate limit bucket vanished while being locked'), { code: '40001' });
    return second;
  };

  const decideOnce = async (buckets: readonly RateBucket[]): Promise<RateDecision> => {
    const ids = [...new Set(buckets.map((b) => b.id))];
    const client = await pool.connect();
    let discard = false;
    try {
      const rows = await lockAll(client, ids);
      const logs = new Map(rows.map((r) => [r.bucket, r.hits]));
      const newest = Math.max(...rows.map((r) => r.hits[r.hits.length - 1] ?? Number.NEGATIVE_INFINITY));
      const now = Math.max(clock === undefined ? rows[0]!.now_ms : clock.now().getTime(), newest);

      const state = buckets.map((b) => {
        const log = rateLimit.prune(logs.get(b.id) ?? [], now, cfg);
        return { b, log, ...rateLimit.check(log, b.limit, now, cfg) };
      });
      const allowed = state.every((s) => s.allowed);
      if (allowed) {
        const saved = new Map(state.map((s) => [s.b.id, rateLimit.record(s.log, now)]));
        for (const s of state) s.log = saved.get(s.b.id)!;
        const savedIds = [...saved.keys()];
        await client.query(SAVE_SQL, [savedIds, savedIds.map((id) => `{${saved.get(id)!.join(',')}}`)]);
      }
      await client.query('COMMIT');
      sweep(now);

      // Report the bucket closest to its limit: that is the one a client must pace itself by.
      let worst = state[0]!;
      for (const s of state) if (s.remaining < worst.remaining || (!s.allowed && worst.allowed)) worst = s;
      const resetMs = worst.log.length === 0 ? windowMs : worst.log[0]! + windowMs - now;
      return {
        allowed,
        limit: worst.b.limit,
        remaining: worst.remaining,
        resetS: Math.max(1, Math.ceil(resetMs / 1000)),
        retryAfterS: allowed ? 0 : Math.max(1, Math.ceil(Math.max(...state.map((s) => s.waitMs)) / 1000)),
      };
    } catch (e) {
      await client.query('ROLLBACK').catch(() => {
        discard = true;
      });
      throw e;
    } finally {
      client.release(discard);
    }
  };

  return {
    consume: (buckets) => async () => {
      // Nothing to count against: nothing can refuse the call.
      if (buckets.length === 0) return { allowed: true, limit: 0, remaining: 0, resetS: Math.max(1, Math.ceil(windowMs / 1000)), retryAfterS: 0 };
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
