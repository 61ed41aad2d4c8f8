import type { AuthorizationCode, OAuthClient, OAuthGrant, OAuthToken } from '../model/oauth.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/**
 * The OAuth authorization server's records: registered clients, authorization codes, grants and their
 * tokens. Codes and tokens are stored only as hashes. Lookups by hash or grant id look across tenants (the
 * secret or id is what identifies them); the caller checks expiry and revocation.
 */
export interface OAuthStore {
  /** Inserting a taken client id fails with ConcurrentModification. */
  insertClient(client: OAuthClient): StoreResult<void>;
  findClient(id: string): StoreResult<OAuthClient | null>;
  /** Inserting a taken code hash fails with ConcurrentModification. */
  insertCode(code: AuthorizationCode): StoreResult<void>;
  /**
   * Marks the code used (at `at`, for grant `grantId`) if it is not used yet, and returns the code as it was
   * before this call: `usedAt` null means this call consumed it; non-null means it had been used before (a
   * replay). `null` for an unknown code. Atomic: of two concurrent calls, one sees it unused.
   */
  useCode(codeHash: string, at: string, grantId: string): StoreResult<AuthorizationCode | null>;
  /** Inserting a taken grant id fails with ConcurrentModification. */
  insertGrant(grant: OAuthGrant): StoreResult<void>;
  /** The grant with this id in any tenant, revoked or not. */
  findGrant(id: string): StoreResult<OAuthGrant | null>;
  /** The grants of a tenant (revoked included), by (createdAt, id). */
  listGrants(tenant: Tenant, query: KeysetQuery<undefined>): StoreResult<KeysetPage<OAuthGrant>>;
  /** Sets `revokedAt` if not set; harmless on a revoked or unknown grant. */
  revokeGrant(id: string, at: string): StoreResult<void>;
  /** Revokes every unrevoked grant the key consented to. */
  revokeGrantsOfKey(keyId: string, at: string): StoreResult<void>;
  /** Inserting a taken token hash fails with ConcurrentModification. */
  insertToken(token: OAuthToken): StoreResult<void>;
  findToken(tokenHash: string): StoreResult<OAuthToken | null>;
  /** Marks the token spent if it is not; true when this call spent it (of two concurrent calls, one wins). */
  spendToken(tokenHash: string, at: string): StoreResult<boolean>;
  /**
   * Deletes up to `limit` registered clients created after `after` (any time, when null) and before `before` that
   * no authorization code and no grant names (they never reached consent), oldest first; answers how many.
   * Clients known by a metadata document are not stored.
   */
  purgeUnusedClients(after: string | null, before: string, limit: number): StoreResult<number>;
}

