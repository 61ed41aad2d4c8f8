import type { DomainEvent } from '@esig/core';
import { EVENT_TYPES } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, oneOf, rowType } from '../decode.js';

export const EventTypeC = oneOf(EVENT_TYPES, 'EventType');

export const eventRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    type: EventTypeC,
    created_at: c.timestamp,
    data: c.json(t.UnknownRecord),
    redelivery_of: nullable(t.string),
  });

export const toEvent = (r: t.TypeOf<ReturnType<typeof eventRow>>): DomainEvent => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  type: r.type,
  createdAt: r.created_at,
  data: r.data,
  redeliveryOf: r.redelivery_of,
});
