import { pipe } from 'fp-ts/lib/function.js';
import * as TE from './task-either.js';
import type { StoreError } from './errors.js';
import { storeFailure } from './errors.js';
import type { Principal } from './model/principal.js';
import { credentialId } from './model/principal.js';
import type { ApiKeyStore } from './ports/api-key-store.js';
import type { Admission, KeyAdmission, KeyLimits } from './ports/key-admission.js';
import type { RateBucket, RateLimiter } from './ports/rate-limiter.js';

/**
 * The buckets a caller's calls count against: its credential's own (`key:<id>`, `grant:<id>`, …, see
 * `credentialId`) and its organization's (`org:<orgId>`). The HTTP adapter charges every authenticated call
 * to these, and every KeyAdmission names an API key's buckets the same way, so both count in one window.
 */
export const principalBuckets = (p: Pick<Principal, 'credential' | 'tenant'>, limits: KeyLimits): RateBucket[] => [
  { id: credentialId(p.credential), limit: limits.perKey },
  { id: `org:${p.tenant.orgId}`, limit: limits.perOrg },
];

/**
 * A KeyAdmission from its two halves: the key looked up, then (only for a key that may be used) the call
 * charged. Two steps where the stores are apart; a store holding both may provide its own in one.
 *
 * @example
 * // The limiter would be createMemoryRateLimiter(systemClock, 60_000) from @esig/ratelimit-memory; this one admits all.
 * const admission = composeKeyAdmission(openSqliteStore({ path }).stores.apiKeys, {
 *   consume: () => async () => ({ allowed: true, limit: 600, remaining: 599, resetS: 60, retryAfterS: 0 }),
 * });
 * const { key, decision } = await admission.admit(deps.crypto.sha256Hex('esig_test_…'), { perKey: 600, perOrg: 3000 })().then(E.getOrElseW(() => ({ key: null, decision: null })));
 * console.log(key?.id ?? 'no such key', decision?.allowed);
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
              TE.tryCatch(rateLimiter.consume(principalBuckets({ credential: { kind: 'api_key', keyId: key.id }, tenant: { orgId: key.orgId, mode: key.mode } }, limits)), storeFailure),
              TE.map((decision) => ({ key, decision })),
            ),
      ),
    ),
});
