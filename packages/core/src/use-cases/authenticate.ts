import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { DomainError } from '../errors.js';
import { unauthenticated } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { Crypto } from '../ports/crypto.js';
import type { Stores } from '../ports/stores.js';

/** API key secrets: `esig_test_…` or `esig_live_…`, the mode visible in the key itself. */
export const API_KEY_PATTERN: RegExp = /^esig_(test|live)_[A-Za-z0-9]{32,128}$/;

/**
 * Resolves an API key secret to the principal it stands for. The secret is looked up by its SHA-256 (never
 * stored in clear) and the stored digest is compared again in constant time; a revoked key is refused.
 *
 * @example
 * const principal = await authenticate(deps)('esig_test_…')(); // Left: Unauthenticated
 */
export const authenticate =
  (deps: { readonly stores: Stores; readonly crypto: Crypto }) =>
  (secret: string): TE.TaskEither<DomainError, Principal> => {
    if (!API_KEY_PATTERN.test(secret)) return TE.left(unauthenticated('The API key is malformed.'));
    const digest = deps.crypto.sha256Hex(secret);
    return pipe(
      deps.stores.apiKeys.findBySecretHash(digest),
      TE.chainW((key) =>
        key === null || !deps.crypto.timingSafeEqual(key.secretHash, digest) || key.revokedAt !== null
          ? TE.left(unauthenticated('The API key is unknown or revoked.'))
          : TE.right<DomainError, Principal>({ tenant: { orgId: key.orgId, mode: key.mode }, scopes: key.scopes, credential: { kind: 'api_key', keyId: key.id } }),
      ),
    );
  };
