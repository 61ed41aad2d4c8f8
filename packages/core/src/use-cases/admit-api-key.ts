import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { unauthenticated } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { Crypto } from '../ports/crypto.js';
import type { KeyAdmission, KeyLimits } from '../ports/key-admission.js';
import type { RateDecision } from '../ports/rate-limiter.js';
import { API_KEY_PATTERN, keyPrincipal } from './authenticate.js';

export interface Admitted {
  readonly principal: Principal;
  /** The call, counted against the key's and its organization's limits (it may have been refused). */
  readonly decision: RateDecision;
}

/**
 * `authenticate` for an API key secret, with the call counted against the key's limits in the same step
 * (see the KeyAdmission port): the principal and the rate decision, or Unauthenticated for a malformed,
 * unknown or revoked key, which is charged nothing. The stored digest is compared again in constant time.
 *
 * @example
 * const keyAdmission = composeKeyAdmission(deps.stores.apiKeys, {
 *   consume: () => async () => ({ allowed: false, limit: 600, remaining: 0, resetS: 12, retryAfterS: 12 }),
 * });
 * const r = await admitApiKey({ keyAdmission, crypto: deps.crypto })('esig_test_…', { perKey: 600, perOrg: 3000 })();
 * if (E.isRight(r) && !r.right.decision.allowed) console.log(`429, Retry-After: ${r.right.decision.retryAfterS}`);
 */
export const admitApiKey =
  (deps: { readonly keyAdmission: KeyAdmission; readonly crypto: Crypto }) =>
  (secret: string, limits: KeyLimits): TE.TaskEither<DomainError, Admitted> => {
    if (!API_KEY_PATTERN.test(secret)) return TE.left(unauthenticated('The API key is malformed.'));
    const digest = deps.crypto.sha256Hex(secret);
    return pipe(
      deps.keyAdmission.admit(digest, limits),
      TE.chainEitherKW(({ key, decision }) =>
        pipe(
          keyPrincipal(deps.crypto, digest)(key),
          // A usable key is always charged; a store that charged nothing is not trusted with it either.
          E.chain((principal): E.Either<DomainError, Admitted> => (decision === null ? E.left(unauthenticated('The API key is unknown or revoked.')) : E.right({ principal, decision }))),
        ),
      ),
    );
  };
