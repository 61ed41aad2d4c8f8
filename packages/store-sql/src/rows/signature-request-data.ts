import type { SignatureRequest, StoreError } from '@esig/core';
import { AUTHENTICATION_METHODS, FIELD_TYPES, RECIPIENT_ROLES, RECIPIENT_STATUSES, SIGNING_ORDERS } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';
import { Int, ModeC, Timestamp, decode, listOf, nullable, oneOf, rowType, withDefault } from '../decode.js';
import { RequestStatusC } from './signature-requests.js';

// Fields added to the aggregate after rows were written without them read with a default (`withDefault`):
// both dialects keep the aggregate as JSON, so an older row is the same JSON in either.
const RecipientC = rowType({
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
  // Added with signing (migration 0002).
  authenticatedAt: withDefault(nullable(Timestamp), null),
  otp: withDefault(nullable(rowType({ codeHash: t.string, expiresAt: Timestamp }, 'PendingOtp')), null),
  authFailures: withDefault(Int, 0),
  signature: withDefault(nullable(rowType({ kind: oneOf(['typed', 'drawn'] as const, 'SignatureKind'), value: t.string }, 'AdoptedSignature')), null),
  // Added with the per-recipient limit on mailed codes.
  otpSentAt: withDefault(listOf(Timestamp), []),
});

// JSON has no NaN or Infinity: such a coordinate would be stored as null and never read back.
const Finite = t.refinement(t.number, Number.isFinite, 'FiniteNumber');

const FieldC = rowType({
  id: t.string,
  documentId: t.string,
  recipientId: t.string,
  type: oneOf(FIELD_TYPES, 'FieldType'),
  page: Int,
  x: Finite,
  y: Finite,
  width: Finite,
  height: Finite,
  required: t.boolean,
  value: nullable(t.union([t.string, t.boolean])),
});

/**
 * The signature-request aggregate as both SQL dialects keep it in the `data` column, checked when it is
 * written and when it is read back (one codec, so the dialects cannot drift apart).
 */
export const SignatureRequestData: t.Type<SignatureRequest, unknown, unknown> = rowType(
  {
    id: t.string,
    orgId: t.string,
    mode: ModeC,
    title: t.string,
    message: nullable(t.string),
    status: RequestStatusC,
    documentIds: listOf(t.string),
    recipients: listOf(RecipientC),
    fields: listOf(FieldC),
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
    // Added with sealing.
    finishedSha256: withDefault(nullable(t.string), null),
    version: Int,
  },
  'SignatureRequest',
) as unknown as t.Type<SignatureRequest, unknown, unknown>;

/**
 * An aggregate about to be written, checked with the codec that reads it back. SignatureRequestData changes
 * nothing it accepts (plain `t.type`s, refinements and lists without holes: a complete value has no default
 * to fill in and no key is stripped), so a value its `is` accepts is what decoding it returns, and is checked
 * without io-ts building a context for each key on every write. Anything else is decoded, for the errors. Like decoding,
 * it checks the fields as they read, not the JSON: an aggregate is a plain object (the domain builds them with
 * spreads), whose JSON holds exactly those fields.
 */
export const checkedAggregate = (req: SignatureRequest): E.Either<StoreError, SignatureRequest> => {
  // Typed as the domain's type, but written by code: checked as any value would be.
  const u: unknown = req;
  return SignatureRequestData.is(u) ? E.right(u) : decode(SignatureRequestData, `new signature_requests data ${req.id}`)(u);
};
