import type { Tenant } from '../model/tenant.js';
import type { ApiLogEntry } from '../model/webhook.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/** The request log (API calls and webhook calls), per tenant. Append-only. */
export interface ApiLogStore {
  /**
   * Appends several entries at once (the HTTP adapter batches them off the request path), all or nothing:
   * an id already stored, or repeated in the batch, fails the whole batch with ConcurrentModification.
   */
  append(entries: readonly ApiLogEntry[]): StoreResult<void>;
  list(tenant: Tenant, query: KeysetQuery<{ readonly kind?: ApiLogEntry['kind'] }>): StoreResult<KeysetPage<ApiLogEntry>>;
}
