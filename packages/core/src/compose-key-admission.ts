import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from './errors.js';
import { storeFailure } from './errors.js';
import type { ApiKeyStore } from './ports/api-key-store.js';
import type { Admission, KeyAdmission, KeyLimits } from './ports/key-admission.js';
import type { RateBucket, RateLimiter } from './ports/rate-limiter.js';

/** The bucket ids of a key's limits, as every KeyAdmission names them. */
export const keyBuckets = (key: { readonly id: string; readonly orgId: string }, limits: KeyLimits): RateBucket[] => [
  { id: `key:${key.id}`, limit: limits.perKey },
  { id: `org:${key.orgId}`, limit: limits.perOrg },
];

/**
 * A KeyAdmission from its two halves: the key looked up, then (only for a key that may be used) the call
 * charged. Two steps where the stores are apart; a store holding both may provide its own in one.
 *
 * @example
 * const admission = composeKeyAdmission(db.stores.apiKeys, createMemoryRateLimiter(clock, 60_000));
 */
export const composeKeyAdmission = (apiKeys: ApiKeyStore, rateLimiter: RateLimiter): KeyAdmission => ({
  admit: (secretHash, limits) =>
    pipe(
      apiKeys.findBySecretHash(secretHash),
      TE.chain((key): TE.TaskEither<StoreError, Admission> =>
        key === null || key.revokedAt !== null
          ? TE.right({ key, decision: null })
          : pipe(
              // The RateLimiter port reports a failure by rejecting.
              TE.tryCatch(rateLimiter.consume(keyBuckets(key, limits)), storeFailure),
              TE.map((decision) => ({ key, decision })),
            ),
      ),
    ),
});
