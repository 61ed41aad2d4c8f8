import type { ApiKey } from '../model/api-key.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/** API keys, stored only as a hash of the secret. */
export interface ApiKeyStore {
  /** Secret hashes are unique across the installation: inserting a taken one fails. */
  insert(key: ApiKey): StoreResult<void>;
  /**
   * The one key across all tenants whose secret hash is `secretHash`, revoked or not (`null` if none).
   * Authentication needs this unscoped lookup; the caller must still check `revokedAt`.
   */
  findBySecretHash(secretHash: string): StoreResult<ApiKey | null>;
  findById(tenant: Tenant, id: string): StoreResult<ApiKey | null>;
  list(tenant: Tenant, query: KeysetQuery<undefined>): StoreResult<KeysetPage<ApiKey>>;
  /** Sets `revokedAt` if not yet set; a no-op on an already revoked key. */
  revoke(tenant: Tenant, id: string, at: string): StoreResult<void>;
  /** Number of keys in the whole installation, revoked included (for the first-start bootstrap). */
  count(): StoreResult<number>;
}
