import type { EvidenceStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { evidenceRow, toEvidenceEntry } from '@esig/store-sql';
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowDecoder } from './decode.js';

const EvidenceRow = evidenceRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, request_id, recipient_id, action, at, ip, user_agent, details';

const decodeRow = rowDecoder(EvidenceRow, 'evidence', toEvidenceEntry);

/** The EvidenceStore: an append-only table, read one request at a time through (org_id, mode, request_id, at, id). */
export const sqliteEvidence = (conn: Conn): EvidenceStore => ({
  append: (entry) => {
    const row = {
      id: entry.id,
      org_id: entry.orgId,
      mode: entry.mode,
      request_id: entry.requestId,
      recipient_id: entry.recipientId,
      action: entry.action,
      at: entry.at,
      ip: entry.ip,
      user_agent: entry.userAgent,
      details: JSON.stringify(entry.details),
    };
    return pipe(
      TE.fromEither(decode(EvidenceRow, `new evidence row ${entry.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO evidence (${COLUMNS}) VALUES (@id, @org_id, @mode, @request_id, @recipient_id, @action, @at, @ip, @user_agent, @details)`)
              .run(row),
          () => concurrentModification('evidence', entry.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  listForRequest: (tenant, requestId) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare(`SELECT ${COLUMNS} FROM evidence WHERE org_id = ? AND mode = ? AND request_id = ? ORDER BY at, id`)
          .all(tenant.orgId, tenant.mode, requestId),
      ),
      TE.chainEitherK(A.traverse(E.Applicative)(decodeRow)),
    ),
});
