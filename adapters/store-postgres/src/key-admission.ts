import type { Admission, Clock, KeyAdmission, StoreError, StoreResult } from '@esig/core';
import { rateLimit, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import type pg from 'pg';
import { COLUMNS, decodeRow } from './api-keys.js';
import { isLostRace, prepared } from './connection.js';
import { ATTEMPTS, createSweeper, decodeRows } from './rate-limiter.js';

const KEY_COLUMNS = COLUMNS.split(', ')
  .map((c) => `k.${c}`)
  .join(', ');

/**
 * The key and, only when it is not revoked, its call counted in `esig_rate_limit_consume` (migration 0004),
 * in one statement. A revoked key passes no buckets (NULL), so the function counts nothing and answers no
 * rows. The buckets are named as the core's `principalBuckets` names them, so calls counted here and through
 * the rate limiter share their windows (the contract suite checks it). The key's bucket `key:<id>` sorts before its org's `org:<orgId>` ("C" collation: k < o), which is
 * the order every caller locks buckets in. Rows: none for an unknown key, one with no bucket for a revoked
 * one, one per bucket for a live one.
 */
const ADMIT = prepared(
  'key_admission',
  `SELECT ${KEY_COLUMNS}, rl.bucket, rl.used, rl.oldest_ms, rl.must_expire_ms, rl.allowed, rl.now_ms
   FROM api_keys k
   LEFT JOIN LATERAL esig_rate_limit_consume(
     CASE WHEN k.revoked_at IS NULL THEN ARRAY['key:' || k.id, 'org:' || k.org_id] END,
     ARRAY[$2::integer, $3::integer], $4::bigint, $5::bigint
   ) AS rl ON true
   WHERE k.secret_hash = $1`,
);

/**
 * The KeyAdmission on PostgreSQL: the API key looked up and its call counted in one round trip instead of
 * two, with the decisions of `composeKeyAdmission(pgApiKeys, createPgRateLimiter(…))` (both run the
 * KeyAdmission contract of @esig/testkit). Nothing is cached: every request reads the key's row as it is,
 * so a revocation holds on the very next request in every process.
 */
export const createPgKeyAdmission = (pool: pg.Pool, windowMs: number, clock?: Clock): KeyAdmission => {
  if (!(windowMs > 0)) throw new RangeError(`windowMs must be positive, got ${windowMs}`);
  const sweep = createSweeper(pool, windowMs);

  const admitOnce = async (secretHash: string, perKey: number, perOrg: number): Promise<E.Either<StoreError, Admission>> => {
    const res = await pool.query({ ...ADMIT, values: [secretHash, perKey, perOrg, windowMs, clock === undefined ? null : clock.now().getTime()] });
    const first = res.rows[0];
    if (first === undefined) return E.right({ key: null, decision: null });
    const key = decodeRow(first);
    if (E.isLeft(key)) return key;
    const live = res.rows.filter((r: { bucket: unknown }) => r.bucket !== null);
    if (live.length === 0) return E.right({ key: key.right, decision: null });
    const rows = new Map(decodeRows(live).map((r) => [r.bucket, r]));
    const keyBucket = rows.get(`key:${key.right.id}`);
    const orgBucket = rows.get(`org:${key.right.orgId}`);
    if (keyBucket === undefined || orgBucket === undefined || rows.size !== 2)
      return E.left(storeFailure(new Error(`esig_rate_limit_consume answered for ${rows.size} of the key's 2 buckets`)));
    const now = keyBucket.now_ms;
    sweep(now);
    const state = [
      { limit: perKey, used: keyBucket.used, oldestMs: keyBucket.oldest_ms, mustExpireMs: keyBucket.must_expire_ms },
      { limit: perOrg, used: orgBucket.used, oldestMs: orgBucket.oldest_ms, mustExpireMs: orgBucket.must_expire_ms },
    ];
    return E.right({ key: key.right, decision: rateLimit.decide(state, now, { windowMs }) });
  };

  return {
    admit:
      (secretHash, { perKey, perOrg }): StoreResult<Admission> =>
      async () => {
        for (const [name, limit] of [['perKey', perKey], ['perOrg', perOrg]] as const)
          if (!Number.isSafeInteger(limit) || limit < 1) return E.left(storeFailure(new RangeError(`${name} must be a positive integer, got ${limit}`)));
        for (let attempt = 1; ; attempt++) {
          try {
            return await admitOnce(secretHash, perKey, perOrg);
          } catch (e) {
            // A lost race the server broke (a bucket swept while being locked, a deadlock): the call wrote
            // nothing, so it is tried again; anything else is a failure.
            if (attempt >= ATTEMPTS || !isLostRace(e)) return E.left(storeFailure(e));
          }
        }
      },
  };
};
