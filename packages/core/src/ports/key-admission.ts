import type { ApiKey } from '../model/api-key.js';
import type { RateDecision } from './rate-limiter.js';
import type { StoreResult } from './store-result.js';

/** What an API key's calls count against: its own bucket (`key:<id>`) and its organization's (`org:<orgId>`). */
export interface KeyLimits {
  readonly perKey: number;
  readonly perOrg: number;
}

export interface Admission {
  /** The key whose secret hash was asked for, revoked or not; `null` when there is none. */
  readonly key: ApiKey | null;
  /** The rate decision for the call, charged to the key's buckets; `null` (nothing charged) unless the key is there and not revoked. */
  readonly decision: RateDecision | null;
}

/**
 * The first thing every request with an API key does: find the key by the hash of its secret and, when it
 * may be used, count the call against its limits. One port for the two steps, so that a store which holds
 * both the keys and the rate limiter's windows can answer in one statement (on PostgreSQL, one round trip of
 * the request's few fewer). `composeKeyAdmission` makes one from an ApiKeyStore and a RateLimiter.
 *
 * A revoked or unknown key charges nothing: a stolen, revoked key must not use up its organization's limit.
 */
export interface KeyAdmission {
  admit(secretHash: string, limits: KeyLimits): StoreResult<Admission>;
}
