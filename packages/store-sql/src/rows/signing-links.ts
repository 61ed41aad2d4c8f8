import type { SigningLink } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, rowType } from '../decode.js';

export const signingLinkRow = (c: ColumnCodecs) =>
  rowType({
    token_hash: t.string,
    org_id: t.string,
    mode: ModeC,
    request_id: t.string,
    recipient_id: t.string,
    created_at: c.timestamp,
    expires_at: nullable(c.timestamp),
  });

export const toSigningLink = (r: t.TypeOf<ReturnType<typeof signingLinkRow>>): SigningLink => ({
  tokenHash: r.token_hash,
  orgId: r.org_id,
  mode: r.mode,
  requestId: r.request_id,
  recipientId: r.recipient_id,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});
