import type { StoredMail, TestMailboxStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { run } from './connection';
import { ModeC, Timestamp, TimestampColumn, decode, rowName } from './decode';
import type { KeysetTable } from './keyset';
import { listKeyset } from './keyset';

const MailRow = t.type({
  id: t.string,
  org_id: t.string,
  mode: ModeC,
  to_address: t.string,
  subject: t.string,
  text: t.string,
  html: t.string,
  message_id: t.string,
  created_at: TimestampColumn,
});

const NewMail = t.type({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  to: t.string,
  subject: t.string,
  text: t.string,
  html: t.string,
  messageId: t.string,
  createdAt: Timestamp,
});

const COLUMNS = 'id, org_id, mode, to_address, subject, text, html, message_id, created_at';
// The `to` filter is an exact match on the address as the mail was addressed.
const TABLE: KeysetTable = { table: 'test_mailbox', columns: COLUMNS, filterColumn: 'to_address' };

const toMail = (r: t.TypeOf<typeof MailRow>): StoredMail => ({
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

const decodeRow = (row: unknown) => pipe(decode(MailRow, rowName('test_mailbox', row))(row), E.map(toMail));

/** The TestMailboxStore: test-mode mail kept instead of sent, listed newest or oldest first. */
export const pgTestMailbox = (conn: Conn): TestMailboxStore => ({
  insert: (mail) => {
    const exists = () => concurrentModification('test_mail', mail.id);
    return pipe(
      TE.fromEither(decode(NewMail, `new test_mailbox row ${mail.id}`)(mail)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `INSERT INTO test_mailbox (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
          [mail.id, mail.orgId, mail.mode, mail.to, mail.subject, mail.text, mail.html, mail.messageId, mail.createdAt],
          exists,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(exists()))),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.to, decodeRow),
});
