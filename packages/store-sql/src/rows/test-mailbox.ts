import type { StoredMail } from '@esig/core';
import * as t from 'io-ts';
import type { ColumnCodecs } from '../columns.js';
import { ModeC, rowType } from '../decode.js';

export const mailRow = (c: ColumnCodecs) =>
  rowType({
    id: t.string,
    org_id: t.string,
    mode: ModeC,
    to_address: t.string,
    subject: t.string,
    text: t.string,
    html: t.string,
    message_id: t.string,
    created_at: c.timestamp,
  });

export const toMail = (r: t.TypeOf<ReturnType<typeof mailRow>>): StoredMail => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  to: r.to_address,
  subject: r.subject,
  text: r.text,
  html: r.html,
  messageId: r.message_id,
  createdAt: r.created_at,
});
