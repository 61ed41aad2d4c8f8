import type { EvidenceStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { EvidenceActionC, EvidenceDetailsC, evidenceRow, toEvidenceEntry } from '@esig/store-sql';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { ModeC, Timestamp, columnCodecs, decode, decodeAll, nullable, rowDecoder, rowType } from './decode.js';

const EvidenceRow = evidenceRow(columnCodecs);

const NewEntry = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  requestId: t.string,
  recipientId: nullable(t.string),
  action: EvidenceActionC,
  at: Timestamp,
  ip: nullable(t.string),
  userAgent: nullable(t.string),
  details: EvidenceDetailsC,
});

const COLUMNS = 'id, org_id, mode, request_id, recipient_id, action, at, ip, user_agent, details';

/**
 * One request's entries in the order they happened, found through the index (org_id, mode, request_id,
 * at, id). Parameters: org, mode, request id.
 */
export const LIST_FOR_REQUEST_SQL = `SELECT ${COLUMNS} FROM evidence WHERE org_id = $1 AND mode = $2 AND request_id = $3 ORDER BY at, id`;

const decodeRow = rowDecoder(EvidenceRow, 'evidence', toEvidenceEntry);

/** The EvidenceStore: append and read back; nothing here updates or deletes an entry. */
export const pgEvidence = (conn: Conn): EvidenceStore => ({
  append: (entry) => {
    const exists = () => concurrentModification('evidence', entry.id);
    return pipe(
      TE.fromEither(decode(NewEntry, `new evidence row ${entry.id}`)(entry)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `INSERT INTO evidence (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb) ON CONFLICT DO NOTHING`,
          [
            entry.id,
            entry.orgId,
            entry.mode,
            entry.requestId,
            entry.recipientId,
            entry.action,
            entry.at,
            entry.ip,
            entry.userAgent,
            JSON.stringify(entry.details),
          ],
          exists,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(exists()))),
    );
  },

  listForRequest: (tenant, requestId) =>
    pipe(
      run(conn, 'read', LIST_FOR_REQUEST_SQL, [tenant.orgId, tenant.mode, requestId]),
      TE.chainEitherK((r) => decodeAll(decodeRow)(r.rows)),
    ),
});
