import type { IdempotencyRecord } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf, rowType } from '../decode.js';

export const StoredResponseC = t.intersection(
  [rowType({ status: Int, body: t.string, headers: t.record(t.string, t.string) }), t.partial({ inClear: t.literal(true) })],
  'StoredResponse',
);
export const IdempotencyStateC = oneOf(['in_progress', 'completed'] as const, 'IdempotencyState');

export const idempotencyRow = (c: ColumnCodecs) =>
  rowType({
    org_id: t.string,
    mode: ModeC,
    key: t.string,
    fingerprint: t.string,
    state: IdempotencyStateC,
    response: nullable(c.json(StoredResponseC)),
    created_at: c.timestamp,
    locked_until: c.timestamp,
    expires_at: c.timestamp,
  });

export const toIdempotencyRecord = (r: t.TypeOf<ReturnType<typeof idempotencyRow>>): IdempotencyRecord => ({
  tenant: { orgId: r.org_id, mode: r.mode },
  key: r.key,
  fingerprint: r.fingerprint,
  state: r.state,
  response: r.response,
  createdAt: r.created_at,
  lockedUntil: r.locked_until,
  expiresAt: r.expires_at,
});
