import type { Admission, Clock, KeyAdmission, KeyLimits, StoreError, StoreResult } from '@esig/core';
import { rateLimit, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { COLUMNS, decodeRow } from './api-keys.js';
import { isLostRace, prepared } from './connection.js';
import type { BucketRow } from './rate-limiter.js';
import { ATTEMPTS, createSweeper, decodeRows } from './rate-limiter.js';

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

/** Most calls one statement decides; the rest wait for the next. Bounds the rows one statement writes. */
export const MAX_BATCH = 256;

type Answer = E.Either<StoreError, Admission>;

/**
 * Each call of a batch decided in arrival order at the batch's time `now`: the first `admitted` see the
 * calls before them in the batch as used, the rest are refused with the bucket as it stands once those are
 * in. The same decisions the calls would get one after another at `now` (a property test checks it).
 */
const decisionsOf = (rows: readonly { row: BucketRow; limit: number }[], count: number, windowMs: number) => {
  const admitted = rows[0]!.row.admitted;
  const now = rows[0]!.row.now_ms;
  return Array.from({ length: count }, (_, i) => {
    const before = Math.min(i, admitted);
    const state: rateLimit.BucketState[] = rows.map(({ row, limit }) => ({
      limit,
      used: row.used + before,
      // A window empty before the batch starts with the batch's first call.
      oldestMs: row.oldest_ms ?? (before > 0 ? now : null),
      mustExpireMs: i >= admitted && row.used + admitted >= limit ? row.must_expire_ms : null,
    }));
    return rateLimit.decide(state, now, { windowMs });
  });
};

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
    const res = await pool.query({ ...ADMIT, values: [secretHash, perKey, perOrg, windowMs, clock === undefined ? null : clock.now().getTime(), count] });
    const first = res.rows[0];
    if (first === undefined) return all(E.right({ key: null, decision: null }));
    const key = decodeRow(first);
    if (E.isLeft(key)) return all(key);
    const live = res.rows.filter((r: { bucket: unknown }) => r.bucket !== null);
    if (live.length === 0) return all(E.right({ key: key.right, decision: null }));
    const rows = new Map(decodeRows(live).map((r) => [r.bucket, r]));
    const keyBucket = rows.get(`key:${key.right.id}`);
    const orgBucket = rows.get(`org:${key.right.orgId}`);
    if (keyBucket === undefined || orgBucket === undefined || rows.size !== 2)
      return all(E.left(storeFailure(new Error(`esig_rate_limit_consume_many answered for ${rows.size} of the key's 2 buckets`))));
    sweep(keyBucket.now_ms);
    const buckets = [
      { row: keyBucket, limit: perKey },
      { row: orgBucket, limit: perOrg },
    ];
    return decisionsOf(buckets, count, windowMs).map((decision) => E.right({ key: key.right, decision }));
  };

  const admitBatch = async (secretHash: string, limits: KeyLimits, count: number): Promise<readonly Answer[]> => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await admitOnce(secretHash, limits, count);
      } catch (e) {
        // A lost race the server broke (a bucket swept while being locked, a deadlock): the call wrote
        // nothing, so it is tried again; anything else is a failure of every call in the batch.
        if (attempt >= ATTEMPTS || !isLostRace(e)) return Array.from({ length: count }, () => E.left(storeFailure(e)));
      }
    }
  };

  /** The calls waiting for a key's statement, by key and limits; a lane exists while a statement of it is out. */
  const lanes = new Map<string, { readonly secretHash: string; readonly limits: KeyLimits; waiting: ((a: Answer) => void)[] }>();

  const send = (id: string): void => {
    const lane = lanes.get(id)!;
    const batch = lane.waiting.splice(0, MAX_BATCH);
    void admitBatch(lane.secretHash, lane.limits, batch.length).then((answers) => {
      batch.forEach((answer, i) => answer(answers[i]!));
      if (lane.waiting.length > 0) send(id);
      else lanes.delete(id);
    });
  };

  return {
    admit:
      (secretHash, limits): StoreResult<Admission> =>
      () => {
        for (const [name, limit] of [['perKey', limits.perKey], ['perOrg', limits.perOrg]] as const)
          if (!Number.isSafeInteger(limit) || limit < 1) return Promise.resolve(E.left(storeFailure(new RangeError(`${name} must be a positive integer, got ${limit}`))));
        return new Promise<Answer>((answer) => {
          const id = `${limits.perKey}:${limits.perOrg}:${secretHash}`;
          const lane = lanes.get(id);
          if (lane !== undefined) {
            lane.waiting.push(answer);
            return;
          }
          lanes.set(id, { secretHash, limits: { perKey: limits.perKey, perOrg: limits.perOrg }, waiting: [answer] });
          send(id);
        });
      },
  };
};
