import type { TestMailboxStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { mailRow, toMail } from '@esig/store-sql';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { ModeC, Timestamp, columnCodecs, decode, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const MailRow = mailRow(columnCodecs);

const NewMail = rowType({
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

const decodeRow = rowDecoder(MailRow, 'test_mailbox', toMail);

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
