import type { EventType } from '../model/event.js';
import type { Tenant } from '../model/tenant.js';
import type { WebhookEndpoint } from '../model/webhook.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/** Webhook endpoints. Every method filters by tenant: an endpoint belongs to one org and one mode. */
export interface WebhookEndpointStore {
  insert(endpoint: WebhookEndpoint): StoreResult<void>;
  findById(tenant: Tenant, id: string): StoreResult<WebhookEndpoint | null>;
  /**
   * Like findById, and (inside a transaction) holds the endpoint's row lock until it ends, so that
   * concurrent deliveries updating the endpoint's health counters queue instead of conflicting.
   */
  findByIdForUpdate(tenant: Tenant, id: string): StoreResult<WebhookEndpoint | null>;
  list(tenant: Tenant, query: KeysetQuery<undefined>): StoreResult<KeysetPage<WebhookEndpoint>>;
  /** Optimistic update: only if the stored version is `next.version - 1`, else ConcurrentModification. */
  update(next: WebhookEndpoint): StoreResult<void>;
  /**
   * After a successful delivery: resets the endpoint's run of failures (`consecutiveFinalFailures` 0,
   * `failingSince` null), with `updatedAt` = `at` and the next version, only where either is set. One
   * statement, decided on the row as committed when it runs (not as it was when its transaction began): a
   * failure committed before it is reset; one committed after it counts after it. An endpoint that is healthy
   * is left as it is (no new version, and no row lock to queue on), and so is an id not in this tenant. It
   * answers nothing else, so a store may send it without waiting for its answer (`deferWrites`).
   */
  clearFailures(tenant: Tenant, id: string, at: string): StoreResult<void>;
  /** Deletes; `false` when there was nothing to delete in this tenant. */
  delete(tenant: Tenant, id: string): StoreResult<boolean>;
  /** The enabled endpoints of this tenant subscribed to `type`, oldest first. */
  findSubscribed(tenant: Tenant, type: EventType): StoreResult<readonly WebhookEndpoint[]>;
}
