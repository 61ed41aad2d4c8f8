import type { Mode } from './tenant.js';

/** Every event type a webhook endpoint may subscribe to (spec section 6). */
export const EVENT_TYPES = [
  'document.created',
  'request.sent',
  'request.viewed',
  'request.completed',
  'request.declined',
  'request.expired',
  'signer.notified',
  'signer.opened',
  'signer.authenticated',
  'signer.signed',
  'invoice.created',
  'payment.paid',
  'subscription.updated',
] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * A fact recorded in the outbox in the same transaction as the change that caused it. The outbox is also
 * the event log a consumer polls to reconcile. `data` holds identifiers, states, digests and timestamps
 * only (snake_case), never names, addresses, field values or document content.
 */
export interface DomainEvent {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly type: EventType;
  readonly createdAt: string;
  readonly data: Readonly<Record<string, unknown>>;
  readonly redeliveryOf: string | null;
}
