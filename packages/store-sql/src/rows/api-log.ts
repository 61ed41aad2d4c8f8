import type { ApiLogEntry } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { Int, ModeC, nullable, oneOf, rowType } from '../decode.js';

export const ApiLogKindC = oneOf<ApiLogEntry['kind']>(['api', 'webhook'], 'ApiLogKind');

export const apiLogRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    kind: ApiLogKindC,
    method: t.string,
    target: t.string,
    status: nullable(Int),
    outcome: t.string,
    duration_ms: Int,
    key_id: nullable(t.string),
    oauth_client_id: nullable(t.string),
    created_at: c.timestamp,
  });

export const toApiLogEntry = (r: t.TypeOf<ReturnType<typeof apiLogRow>>): ApiLogEntry => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  kind: r.kind,
  method: r.method,
  target: r.target,
  status: r.status,
  outcome: r.outcome,
  durationMs: r.duration_ms,
  keyId: r.key_id,
  oauthClientId: r.oauth_client_id,
  createdAt: r.created_at,
});
