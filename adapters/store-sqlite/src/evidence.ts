import type { EvidenceEntry, EvidenceStore } from '@esig/core';
import { EVIDENCE_ACTIONS, concurrentModification } from '@esig/core';
import * as A from 'fp-ts/Array';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { attempt } from './connection';
import { JsonText, ModeC, Timestamp, decode, nullable, oneOf, rowName } from './decode';

const EvidenceRow = t.type({
  id: t.string,
  org_id: t.string,
  mode: ModeC,
  request_id: t.string,
  recipient_id: nullable(t.string),
  action: oneOf(EVIDENCE_ACTIONS, 'EvidenceAction'),
  at: Timestamp,
  ip: nullable(t.string),
  user_agent: nullable(t.string),
  details: JsonText(t.record(t.string, t.string)),
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

const decodeRow = (row: unknown) => pipe(decode(EvidenceRow, rowName('evidence', row))(row), E.map(toEntry));

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
