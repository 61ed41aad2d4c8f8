import type { EvidenceEntry } from '@esig/core';
import { EVIDENCE_ACTIONS } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, oneOf, rowType } from '../decode.js';

export const EvidenceActionC = oneOf(EVIDENCE_ACTIONS, 'EvidenceAction');
export const EvidenceDetailsC = t.readonly(t.record(t.string, t.string));

export const evidenceRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    request_id: t.string,
    recipient_id: nullable(t.string),
    action: EvidenceActionC,
    at: c.timestamp,
    ip: nullable(t.string),
    user_agent: nullable(t.string),
    details: c.json(EvidenceDetailsC),
  });

export const toEvidenceEntry = (r: t.TypeOf<ReturnType<typeof evidenceRow>>): EvidenceEntry => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  requestId: r.request_id,
  recipientId: r.recipient_id,
  action: r.action,
  at: r.at,
  ip: r.ip,
  userAgent: r.user_agent,
  details: r.details,
});
