import type { AttemptFilter, DeliveryAttempt, WebhookDelivery } from '@esig/core';
import { DELIVERY_STATUSES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf, rowType } from '../decode.js';
import type { KeysetFilters } from '../keyset.js';

export const DeliveryStatusC = oneOf(DELIVERY_STATUSES, 'DeliveryStatus');

export const deliveryRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    endpoint_id: t.string,
    event_id: t.string,
    event_type: t.string,
    body: t.string,
    status: DeliveryStatusC,
    attempts: Int,
    next_attempt_at: nullable(c.timestamp),
    last_attempt_at: nullable(c.timestamp),
    last_outcome: nullable(t.string),
    created_at: c.timestamp,
    version: Int,
  });

export const toDelivery = (r: t.TypeOf<ReturnType<typeof deliveryRow>>): WebhookDelivery => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  body: r.body,
  status: r.status,
  attempts: r.attempts,
  nextAttemptAt: r.next_attempt_at,
  lastAttemptAt: r.last_attempt_at,
  lastOutcome: r.last_outcome,
  createdAt: r.created_at,
  version: r.version,
});

export const attemptRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    delivery_id: t.string,
    endpoint_id: t.string,
    event_id: t.string,
    event_type: t.string,
    attempt: Int,
    outcome: t.string,
    succeeded: c.flag,
    duration_ms: Int,
    response_body: t.string,
    created_at: c.timestamp,
  });

export const toAttempt = (r: t.TypeOf<ReturnType<typeof attemptRow>>): DeliveryAttempt => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  deliveryId: r.delivery_id,
  endpointId: r.endpoint_id,
  eventId: r.event_id,
  eventType: r.event_type,
  attempt: r.attempt,
  outcome: r.outcome,
  succeeded: r.succeeded,
  durationMs: r.duration_ms,
  responseBody: r.response_body,
  createdAt: r.created_at,
});

/** The delivery log's filters (endpoint, event), as equality filters on webhook_attempts' columns. */
export const attemptFilters = (filter: AttemptFilter): KeysetFilters => [
  ...(filter.endpointId !== undefined ? [['endpoint_id', filter.endpointId] as const] : []),
  ...(filter.eventId !== undefined ? [['event_id', filter.eventId] as const] : []),
];
