import type { EvidenceEntry, EvidenceStore } from '@esig/core';
import { EVIDENCE_ACTIONS, concurrentModification } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { run } from './connection';
import { ModeC, Timestamp, TimestampColumn, decode, decodeAll, nullable, oneOf, rowName } from './decode';

const ActionC = oneOf(EVIDENCE_ACTIONS, 'EvidenceAction');
const Details = t.readonly(t.record(t.string, t.string));

const EvidenceRow = t.type({
  id: t.string,
  org_id: t.string,
  mode: ModeC,
  request_id: t.string,
  recipient_id: nullable(t.string),
  action: ActionC,
  at: TimestampColumn,
  ip: nullable(t.string),
  user_agent: nullable(t.string),
  details: Details,
});

const NewEntry = t.type({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  requestId: t.string,
  recipientId: nullable(t.string),
  action: ActionC,
  at: Timestamp,
  ip: nullable(t.string),
  userAgent: nullable(t.string),
  details: Details,
});

const COLUMNS = 'id, org_id, mode, request_id, recipient_id, action, at, ip, user_agent, details';

const toEntry = (r: t.TypeOf<typeof EvidenceRow>): EvidenceEntry => ({
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

/**
 * One request's entries in the order they happened, found through the index (org_id, mode, request_id,
 * at, id). Parameters: org, mode, request id.
 */
export const LIST_FOR_REQUEST_SQL = `SELECT ${COLUMNS} FROM evidence WHERE org_id = $1 AND mode = $2 AND request_id = $3 ORDER BY at, id`;

const decodeRow = (row: unknown) => pipe(decode(EvidenceRow, rowName('evidence', row))(row), E.map(toEntry));

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
