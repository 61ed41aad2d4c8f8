import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import { unauthenticated } from '../errors.js';
import type { ApiKey } from '../model/api-key.js';
import type { OAuthGrant, OAuthToken } from '../model/oauth.js';
import type { Principal } from '../model/principal.js';
import type { Clock } from '../ports/clock.js';
import type { Crypto } from '../ports/crypto.js';
import type { Stores } from '../ports/stores.js';
import { ACCESS_TOKEN_PATTERN } from './oauth/rules.js';

/** API key secrets: `esig_test_…` or `esig_live_…`, the mode visible in the key itself. */
export const API_KEY_PATTERN: RegExp = /^esig_(test|live)_[A-Za-z0-9]{32,128}$/;

/**
 * Resolves an OAuth access token (`esig_oat_…`) to the principal of its grant: the consenting key's org and
 * mode, the grant's scopes. Refused when expired, when the grant is revoked, or when the consenting key is.
 */
export const authenticateAccessToken =
  (deps: { readonly stores: Stores; readonly crypto: Crypto; readonly clock: Clock }) =>
  (secret: string): TE.TaskEither<DomainError, Principal> => {
    const refused = () => unauthenticated('The access token is unknown, expired or revoked.');
    if (!ACCESS_TOKEN_PATTERN.test(secret)) return TE.left(refused());
    const digest = deps.crypto.sha256Hex(secret);
    return pipe(
      deps.stores.oauth.findToken(digest) as TE.TaskEither<DomainError, OAuthToken | null>,
      TE.chain((tok): TE.TaskEither<DomainError, OAuthGrant | null> =>
        tok === null || tok.kind !== 'access' || !deps.crypto.timingSafeEqual(tok.tokenHash, digest) || tok.expiresAt === null || tok.expiresAt <= deps.clock.now().toISOString()
          ? TE.left(refused())
          : deps.stores.oauth.findGrant(tok.grantId),
      ),
      TE.chain((g): TE.TaskEither<DomainError, OAuthGrant> => (g === null || g.revokedAt !== null ? TE.left(refused()) : TE.right(g))),
      TE.chainW((g) =>
        pipe(
          deps.stores.apiKeys.findById({ orgId: g.orgId, mode: g.mode }, g.keyId),
          TE.chainW((k) =>
            k === null || k.revokedAt !== null
              ? TE.left(refused())
              : TE.right<DomainError, Principal>({
                  tenant: { orgId: g.orgId, mode: g.mode },
                  scopes: g.scopes,
                  credential: { kind: 'access_token', keyId: g.keyId, clientId: g.clientId, grantId: g.id },
                }),
          ),
        ),
      ),
    );
  };

/**
 * Resolves an API key secret (or an OAuth access token) to the principal it stands for. The secret is looked up by its SHA-256 (never
 * stored in clear) and the stored digest is compared again in constant time; a revoked key is refused.
 *
 * @example
 * const principal = await authenticate(deps)('esig_test_…')(); // Left: Unauthenticated
 */
export const authenticate =
  (deps: { readonly stores: Stores; readonly crypto: Crypto; readonly clock: Clock }) =>
  (secret: string): TE.TaskEither<DomainError, Principal> => {
    // One resource server, two doors: an OAuth access token is accepted wherever a key is.
    if (secret.startsWith('esig_oat_')) return authenticateAccessToken(deps)(secret);
    if (!API_KEY_PATTERN.test(secret)) return TE.left(unauthenticated('The API key is malformed.'));
    const digest = deps.crypto.sha256Hex(secret);
    return pipe(deps.stores.apiKeys.findBySecretHash(digest), TE.chainEitherKW(keyPrincipal(deps.crypto, digest)));
  };

/**
 * The principal of the key found for `digest` (the SHA-256 of the presented secret): refused when there is
 * none, when the stored digest differs (compared again, in constant time), or when the key is revoked.
 */
export const keyPrincipal =
  (crypto: Crypto, digest: string) =>
  (key: ApiKey | null): E.Either<DomainError, Principal> =>
    key === null || !crypto.timingSafeEqual(key.secretHash, digest) || key.revokedAt !== null
      ? E.left(unauthenticated('The API key is unknown or revoked.'))
      : E.right({ tenant: { orgId: key.orgId, mode: key.mode }, scopes: key.scopes, credential: { kind: 'api_key', keyId: key.id } });
