import type { SignatureRequest, SignatureRequestStore } from '@esig/core';
import {
  AUTHENTICATION_METHODS,
  FIELD_TYPES,
  RECIPIENT_ROLES,
  RECIPIENT_STATUSES,
  SIGNING_ORDERS,
  concurrentModification,
} from '@esig/core';
import { RequestStatusC, consistentRequest, requestRow } from '@esig/store-sql';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { attempt } from './connection';
import { Int, ModeC, Timestamp, columnCodecs, decode, nullable, oneOf, rowName, withDefault } from './decode';
import type { KeysetTable } from './keyset';
import { listKeyset } from './keyset';

const RecipientC = t.type({
  id: t.string,
  email: t.string,
  firstName: t.string,
  lastName: t.string,
  role: oneOf(RECIPIENT_ROLES, 'RecipientRole'),
  order: Int,
  authentication: oneOf(AUTHENTICATION_METHODS, 'AuthenticationMethod'),
  accessCodeHash: nullable(t.string),
  status: oneOf(RECIPIENT_STATUSES, 'RecipientStatus'),
  signedAt: nullable(Timestamp),
  declinedAt: nullable(Timestamp),
  declineReason: nullable(t.string),
  // Added with signing (migration 0002); aggregates written before it lack them.
  authenticatedAt: withDefault(nullable(Timestamp), null),
  otp: withDefault(nullable(t.type({ codeHash: t.string, expiresAt: Timestamp }, 'PendingOtp')), null),
  authFailures: withDefault(Int, 0),
  signature: withDefault(nullable(t.type({ kind: oneOf(['typed', 'drawn'] as const, 'SignatureKind'), value: t.string }, 'AdoptedSignature')), null),
});

const FieldC = t.type({
  id: t.string,
  documentId: t.string,
  recipientId: t.string,
  type: oneOf(FIELD_TYPES, 'FieldType'),
  page: Int,
  x: t.number,
  y: t.number,
  width: t.number,
  height: t.number,
  required: t.boolean,
  value: nullable(t.union([t.string, t.boolean])),
});

/** The whole aggregate as it is kept in the `data` column. */
const SignatureRequestC = t.type(
  {
    id: t.string,
    orgId: t.string,
    mode: ModeC,
    title: t.string,
    message: nullable(t.string),
    status: RequestStatusC,
    documentIds: t.readonlyArray(t.string),
    recipients: t.readonlyArray(RecipientC),
    fields: t.readonlyArray(FieldC),
    signingOrder: oneOf(SIGNING_ORDERS, 'SigningOrder'),
    requestedSignatureLevel: t.literal('SES'),
    expiresAt: nullable(Timestamp),
    createdAt: Timestamp,
    sentAt: nullable(Timestamp),
    completedAt: nullable(Timestamp),
    cancelledAt: nullable(Timestamp),
    declinedAt: nullable(Timestamp),
    expiredAt: nullable(Timestamp),
    certificateId: nullable(t.string),
    finishedSha256: withDefault(nullable(t.string), null),
    version: Int,
  },
  'SignatureRequest',
);

const RequestRow = requestRow(columnCodecs, SignatureRequestC);

const COLUMNS = 'id, org_id, mode, status, created_at, version, data';
const TABLE: KeysetTable = { table: 'signature_requests', columns: COLUMNS, filterColumn: 'status' };

const decodeRow = (row: unknown) => pipe(decode(RequestRow, rowName('signature_requests', row))(row), E.chain(consistentRequest));

/** The row written for an aggregate, validated with the same codec that reads it back. */
const toRow = (req: SignatureRequest) =>
  pipe(
    decode(SignatureRequestC, `new signature_requests data ${req.id}`)(req),
    E.map((data) => ({
      id: data.id,
      org_id: data.orgId,
      mode: data.mode,
      status: data.status,
      created_at: data.createdAt,
      version: data.version,
      data: JSON.stringify(data),
    })),
  );

/** The SignatureRequestStore: aggregates as JSON, with optimistic concurrency on `version`. */
export const sqliteSignatureRequests = (conn: Conn): SignatureRequestStore => ({
  insert: (req) =>
    pipe(
      TE.fromEither(toRow(req)),
      TE.chain((row) =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO signature_requests (${COLUMNS}) VALUES (@id, @org_id, @mode, @status, @created_at, @version, @data)`)
              .run(row),
          () => concurrentModification('signature_request', req.id),
        ),
      ),
      TE.map(() => undefined),
    ),

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) =>
        c.prepare(`SELECT ${COLUMNS} FROM signature_requests WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode),
      ),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  // SQLite transactions are serialized (BEGIN IMMEDIATE behind one queue): the row cannot change under us.
  findByIdForUpdate: (tenant, id) =>
    pipe(
      attempt(conn, (c) =>
        c.prepare(`SELECT ${COLUMNS} FROM signature_requests WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode),
      ),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  update: (next) =>
    pipe(
      TE.fromEither(toRow(next)),
      TE.chain((row) =>
        attempt(conn, (c) =>
          // The version check and the write are one statement, so no other writer can slip in between.
          // created_at must match as well: it is the keyset position, and an aggregate never changes it.
          c
            .prepare(
              `UPDATE signature_requests SET status = @status, version = @version, data = @data
               WHERE id = @id AND org_id = @org_id AND mode = @mode AND version = @version - 1 AND created_at = @created_at`,
            )
            .run(row),
        ),
      ),
      TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('signature_request', next.id)))),
    ),

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.status, decodeRow),
});
