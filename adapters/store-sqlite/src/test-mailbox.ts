import type { TestMailboxStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { mailRow, toMail } from '@esig/store-sql';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const MailRow = mailRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, to_address, subject, text, html, message_id, created_at';
const TABLE: KeysetTable = { table: 'test_mailbox', columns: COLUMNS, filterColumn: 'to_address' };

const decodeRow = rowDecoder(MailRow, 'test_mailbox', toMail);

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
