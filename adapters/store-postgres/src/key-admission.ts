import type { Admission, Clock, KeyAdmission, KeyLimits, StoreError, StoreResult } from '@esig/core';
import { storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { COLUMNS, decodeRow } from './api-keys.js';
import { prepared } from './connection.js';
import { createLanes } from './lanes.js';
import { MAX_BATCH, MAX_LIMIT, batchDecisions, createSweeper, decodeRows, isLimit, retryingLostRaces } from './rate-limiter.js';

const KEY_COLUMNS = COLUMNS.split(', ')
  .map((c) => `k.${c}`)
  .join(', ');

/**
 * The key and, only when it is not revoked, `$6` calls counted in `esig_rate_limit_consume_many`
 * (migrations 0004 and 0010), in one statement. A revoked key passes no buckets (NULL), so the function
 * counts nothing and answers no rows. The buckets are named as the core's `principalBuckets` names them, so
 * calls counted here and through the rate limiter share their windows (the contract suite checks it). The
 * key's bucket `key:<id>` sorts before its org's `org:<orgId>` ("C" collation: k < o), which is the order
 * every caller locks buckets in. Rows: none for an unknown key, one with no bucket for a revoked one, one
 * per bucket for a live one.
 *
 * Prepared, and free to keep a generic plan, although it reads `api_keys`, unlike other lookups (see
 * `prepared`): planned at every call it would cost about 100 µs of a backend's CPU on every request, and
 * `api_keys` grows with the keys made, not with an org's documents or calls. A generic plan made after an
 * ANALYZE of a few keys scans them all while keys are added; `ANALYZE api_keys` (or autovacuum) ends that.
 * The function it calls keeps its statements' plans with sequential scans turned off (migration 0013): each
 * reaches its rows through a primary key, whatever the tables held when last analyzed.
 */
const ADMIT = prepared(
  'key_admission_many',
  `SELECT ${KEY_COLUMNS}, rl.bucket, rl.used, rl.oldest_ms, rl.must_expire_ms, rl.admitted, rl.now_ms
   FROM api_keys k
   LEFT JOIN LATERAL esig_rate_limit_consume_many(
     CASE WHEN k.revoked_at IS NULL THEN ARRAY['key:' || k.id, 'org:' || k.org_id] END,
     ARRAY[$2::integer, $3::integer], $4::bigint, $5::bigint, $6::integer
   ) AS rl ON true
   WHERE k.secret_hash = $1`,
);

type Answer = E.Either<StoreError, Admission>;

/**
 * The KeyAdmission on PostgreSQL: the API key looked up and its call counted in one round trip instead of
 * two, with the decisions of `composeKeyAdmission(pgApiKeys, createPgRateLimiter(…))` (both run the
 * KeyAdmission contract of @esig/testkit). Nothing is cached: every statement reads the key's row as it is.
 *
 * A process has at most one statement out per key (and limits) at a time. Calls that arrive while it is out
 * wait for it and then go together, decided in one statement: a busy key's calls then lock its buckets once
 * per batch rather than queueing for them one by one, each statement holding the organization's bucket
 * while the other backends wait. A call only ever joins a statement not yet sent, so the statement that
 * decides it reads the key after the call arrived: a revocation committed before a call still refuses it.
 * An idle key's call goes out at once, as before.
 */
export const createPgKeyAdmission = (pool: pg.Pool, windowMs: number, clock?: Clock): KeyAdmission => {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const sweep = createSweeper(pool, windowMs);

  const admitOnce = async (secretHash: string, { perKey, perOrg }: KeyLimits, count: number): Promise<readonly Answer[]> => {
    const all = (a: Answer) => Array.from({ length: count }, () => a);
    const res = await pool.query({ values: [secretHash, perKey, perOrg, windowMs, clock === undefined ? null : clock.now().getTime(), count], ...ADMIT });
    const first = res.rows[0];
    if (first === undefined) return all(E.right({ key: null, decision: null }));
    const key = decodeRow(first);
    if (E.isLeft(key)) return all(key);
    const live = res.rows.filter((r: { bucket: unknown }) => r.bucket !== null);
    if (live.length === 0) return all(E.right({ key: key.right, decision: null }));
    const rows = new Map(decodeRows(live).map((r) => [r.bucket, r]));
    const buckets = [
      { id: `key:${key.right.id}`, limit: perKey },
      { id: `org:${key.right.orgId}`, limit: perOrg },
    ];
    if (rows.size !== 2 || !buckets.every((b) => rows.has(b.id)))
      return all(E.left(storeFailure(new Error(`esig_rate_limit_consume_many answered for ${rows.size} of the key's 2 buckets`))));
    sweep(rows.get(buckets[0]!.id)!.now_ms);
    const calls = Array.from({ length: count }, () => buckets);
    return batchDecisions(rows, calls, windowMs).map((decision) => E.right({ key: key.right, decision }));
  };

  // A key's calls (with the same limits) share a lane: one statement out at a time (see lanes.ts). A failed
  // statement fails every call of its batch (below, as a StoreFailure).
  const admitBatch = createLanes(MAX_BATCH, (calls: readonly { secretHash: string; limits: KeyLimits }[]) =>
    retryingLostRaces(() => admitOnce(calls[0]!.secretHash, calls[0]!.limits, calls.length)),
  );

  return {
    admit:
      (secretHash, { perKey, perOrg }): StoreResult<Admission> =>
      () => {
        for (const [name, limit] of [['perKey', perKey], ['perOrg', perOrg]] as const)
          if (!isLimit(limit)) return Promise.resolve(E.left(storeFailure(new RangeError(`${name} must be an integer from 1 to ${MAX_LIMIT}, got ${limit}`))));
        return admitBatch(`${perKey}:${perOrg}:${secretHash}`, { secretHash, limits: { perKey, perOrg } }).catch((e: unknown) => E.left(storeFailure(e)));
      },
  };
};
