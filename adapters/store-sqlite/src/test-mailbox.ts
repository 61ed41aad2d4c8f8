import type { StoredMail, TestMailboxStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { attempt } from './connection';
import { ModeC, Timestamp, decode, rowName } from './decode';
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
  created_at: Timestamp,
});

const COLUMNS = 'id, org_id, mode, to_address, subject, text, html, message_id, created_at';
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

/** The TestMailboxStore: captured mail, paged by (created_at, id) and filterable by exact recipient address. */
export const sqliteTestMailbox = (conn: Conn): TestMailboxStore => ({
  insert: (mail) => {
    const row = {
      id: mail.id,
      org_id: mail.orgId,
      mode: mail.mode,
      to_address: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      message_id: mail.messageId,
      created_at: mail.createdAt,
    };
    return pipe(
      TE.fromEither(decode(MailRow, `new test_mailbox row ${mail.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO test_mailbox (${COLUMNS}) VALUES (@id, @org_id, @mode, @to_address, @subject, @text, @html, @message_id, @created_at)`)
              .run(row),
          () => concurrentModification('test_mail', mail.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.to, decodeRow),
});
