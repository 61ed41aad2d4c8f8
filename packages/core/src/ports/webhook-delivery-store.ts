import type { Tenant } from '../model/tenant.js';
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from '../model/webhook.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

export interface AttemptFilter {
  readonly endpointId?: string;
  readonly eventId?: string;
}

/** A delivery as `findWithEndpoint` reads it: with its endpoint, or null for an endpoint that is gone. */
export interface DeliveryWithEndpoint {
  readonly delivery: WebhookDelivery;
  readonly endpoint: WebhookEndpoint | null;
}

/**
 * Webhook deliveries and the log of their attempts. Scheduling (when the next attempt runs, who holds it)
 * is the JobQueue's; this store keeps each delivery's state and its attempt history.
 */
export interface WebhookDeliveryStore {
  insert(delivery: WebhookDelivery): StoreResult<void>;
  findById(tenant: Tenant, id: string): StoreResult<WebhookDelivery | null>;
  /**
   * The delivery and its endpoint (of the same tenant) in one read, as `findById` on each would give them:
   * what an attempt needs before it POSTs. `endpoint` is null when the endpoint is gone; the whole answer is
   * null when the delivery is not in this tenant. One statement where a database serves the store, instead
   * of two round trips.
   */
  findWithEndpoint(tenant: Tenant, id: string): StoreResult<DeliveryWithEndpoint | null>;
  /**
   * Optimistic update: only if the stored version is `next.version - 1`, else ConcurrentModification.
   * Writes the delivery's state (status, attempts, the attempt times, the outcome, the version); what was
   * fixed at creation (endpoint, event, body, createdAt) stays as stored.
   */
  update(next: WebhookDelivery): StoreResult<void>;
  /**
   * Marks every `pending` delivery of the endpoint `cancelled`; returns how many. Each loses its next
   * attempt time, gets `lastAttemptAt` = `at` if it had none, and goes up one version, so that a worker
   * holding it as pending fails its own update with ConcurrentModification.
   */
  cancelPending(tenant: Tenant, endpointId: string, at: string): StoreResult<number>;
  appendAttempt(attempt: DeliveryAttempt): StoreResult<void>;
  /** One entry of the delivery log by its id; `null` when absent in this tenant. */
  findAttempt(tenant: Tenant, id: string): StoreResult<DeliveryAttempt | null>;
  /** The delivery log: one entry per attempt, keyset-paginated on (createdAt, id). */
  listAttempts(tenant: Tenant, query: KeysetQuery<AttemptFilter>): StoreResult<KeysetPage<DeliveryAttempt>>;
}
