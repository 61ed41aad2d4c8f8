import type { DomainEvent, EventType } from '../model/event.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

export interface EventFilter {
  readonly type?: EventType;
}

/**
 * The transactional outbox and event log. `append` is called inside the transaction of the change that
 * caused the event, so an event exists if and only if its change committed. Event ids are unique: appending
 * an id that exists fails with ConcurrentModification (this is what makes `request.completed:<id>` unique).
 */
export interface EventOutbox {
  append(event: DomainEvent): StoreResult<void>;
  list(tenant: Tenant, query: KeysetQuery<EventFilter>): StoreResult<KeysetPage<DomainEvent>>;
  /** One event of this tenant, or null. */
  findById(tenant: Tenant, id: string): StoreResult<DomainEvent | null>;
}
