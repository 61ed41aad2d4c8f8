import type { WebhookEndpoint, WebhookSecret } from '@esig/core';
import { EVENT_TYPES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, Timestamp, nullable, oneOf, rowType } from '../decode.js';

export const EventTypesC = t.readonlyArray(oneOf(EVENT_TYPES, 'EventType'));
// Inside the JSON, times are the ports' ISO text in either dialect.
export const SecretsC = t.readonlyArray(rowType({ sealed: t.string, createdAt: Timestamp, retiresAt: nullable(Timestamp) }, 'WebhookSecret'));

// Only the secret's own fields: whatever else an object carries is not the port's to store.
export const ownSecretFields = (s: WebhookSecret): WebhookSecret => ({ sealed: s.sealed, createdAt: s.createdAt, retiresAt: s.retiresAt });

export const endpointRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    url: t.string,
    events: c.json(EventTypesC),
    description: nullable(t.string),
    enabled: c.flag,
    disabled_reason: nullable(t.string),
    disabled_at: nullable(c.timestamp),
    secrets: c.json(SecretsC),
    consecutive_final_failures: Int,
    failing_since: nullable(c.timestamp),
    created_at: c.timestamp,
    updated_at: c.timestamp,
    version: Int,
  });

export const toEndpoint = (r: t.TypeOf<ReturnType<typeof endpointRow>>): WebhookEndpoint => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  url: r.url,
  events: r.events,
  description: r.description,
  enabled: r.enabled,
  disabledReason: r.disabled_reason,
  disabledAt: r.disabled_at,
  secrets: r.secrets.map(ownSecretFields),
  consecutiveFinalFailures: r.consecutive_final_failures,
  failingSince: r.failing_since,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
  version: r.version,
});
