import type { EmbedSession } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, nullable, rowType } from '../decode.js';

export const embedSessionRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    token_hash: t.string,
    org_id: t.string,
    mode: ModeC,
    request_id: t.string,
    recipient_id: t.string,
    origin: t.string,
    created_at: c.timestamp,
    expires_at: c.timestamp,
    used_at: nullable(c.timestamp),
  });

export const toEmbedSession = (r: t.TypeOf<ReturnType<typeof embedSessionRow>>): EmbedSession => ({
  id: r.id,
  tokenHash: r.token_hash,
  orgId: r.org_id,
  mode: r.mode,
  requestId: r.request_id,
  recipientId: r.recipient_id,
  origin: r.origin,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  usedAt: r.used_at,
});

export const EMBED_SESSION_COLUMNS = 'id, token_hash, org_id, mode, request_id, recipient_id, origin, created_at, expires_at, used_at';
