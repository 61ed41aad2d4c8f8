import fc from 'fast-check';
import type {
  AdoptedSignature,
  AuthenticationMethod,
  Document,
  DocumentStatus,
  Field,
  FieldType,
  IdempotencyRecord,
  Recipient,
  RecipientRole,
  RecipientStatus,
  RequestStatus,
  SignatureRequest,
  SigningOrder,
  Tenant,
} from '@esig/core';
import { FIELD_TYPES, RECIPIENT_STATUSES, REQUEST_STATUSES, TERMINAL_REQUEST_STATUSES } from '@esig/core';

/** Every generated instant lies after this one (and well before year 10000, so ISO text sorts like time). */
export const T0 = Date.parse('2025-01-01T00:00:00.000Z');
export const iso = (ms: number) => new Date(ms).toISOString();

export const HOUR = 3_600_000;

// ---------------------------------------------------------------- tenants

export const TENANT: Tenant = { orgId: 'org_A', mode: 'test' };
/** The same org in the other mode, and another org in the same mode: both must stay invisible. */
export const OTHER_TENANTS: readonly Tenant[] = [
  { orgId: 'org_A', mode: 'live' },
  { orgId: 'org_B', mode: 'test' },
];

// ---------------------------------------------------------------- signature requests

export const TYPED_SIGNATURE: AdoptedSignature = { kind: 'typed', value: 'Ada Lovelace' };

/** A recipient in `status`, consistent with it: a signed one has its signature, and its identification if asked. */
export const recipient = (
  id: string,
  role: RecipientRole,
  order: number,
  status: RecipientStatus = 'PENDING',
  authentication: AuthenticationMethod = 'none',
): Recipient => ({
  id,
  email: `${id}@example.com`,
  firstName: 'Ada',
  lastName: 'Lovelace',
  role,
  order,
  authentication,
  accessCodeHash: authentication === 'access_code' ? 'c'.repeat(64) : null,
  status,
  signedAt: status === 'SIGNED' ? iso(T0) : null,
  declinedAt: status === 'DECLINED' ? iso(T0) : null,
  declineReason: status === 'DECLINED' ? 'no' : null,
  authenticatedAt: status === 'SIGNED' && authentication !== 'none' ? iso(T0) : null,
  otp: null,
  authFailures: 0,
  otpSentAt: [],
  signature: status === 'SIGNED' ? TYPED_SIGNATURE : null,
});

export const field = (id: string, documentId: string, recipientId: string, type: FieldType, required = true): Field => ({
  id,
  documentId,
  recipientId,
  type,
  page: 1,
  x: 10,
  y: 10,
  width: 100,
  height: 20,
  required,
  value: null,
});

export const baseRequest = (over: Partial<SignatureRequest> = {}): SignatureRequest => ({
  id: 'req_1',
  orgId: TENANT.orgId,
  mode: TENANT.mode,
  title: 'Contract',
  message: null,
  status: 'DRAFT',
  documentIds: ['doc_0'],
  recipients: [],
  fields: [],
  signingOrder: 'parallel',
  requestedSignatureLevel: 'SES',
  expiresAt: null,
  createdAt: iso(T0),
  sentAt: null,
  completedAt: null,
  cancelledAt: null,
  declinedAt: null,
  expiredAt: null,
  certificateId: null,
  finishedSha256: null,
  version: 1,
  ...over,
});

export const roleArb: fc.Arbitrary<RecipientRole> = fc.constantFrom('signer', 'cc');
/** Half of the recipients identify themselves, so that sequences exercise identification often. */
export const authenticationArb: fc.Arbitrary<AuthenticationMethod> = fc.oneof(
  { weight: 2, arbitrary: fc.constant('none' as const) },
  { weight: 1, arbitrary: fc.constant('email_otp' as const) },
  { weight: 1, arbitrary: fc.constant('access_code' as const) },
);
export const orderArb = fc.integer({ min: 1, max: 4 });
export const fieldTypeArb: fc.Arbitrary<FieldType> = fc.constantFrom(...FIELD_TYPES);
export const signingOrderArb: fc.Arbitrary<SigningOrder> = fc.constantFrom('parallel', 'sequential');

/**
 * A DRAFT request with generated documents (possibly none), recipients and consistent fields (only on the
 * request's documents, only for signers). When `readyToSend`, every signer gets a signature field, so that
 * command sequences reach SENT and beyond often.
 */
export const draftRequestArb: fc.Arbitrary<SignatureRequest> = fc
  .record({
    docCount: fc.integer({ min: 0, max: 2 }),
    signingOrder: signingOrderArb,
    recipients: fc.array(fc.record({ role: roleArb, order: orderArb, authentication: authenticationArb }), { maxLength: 4 }),
    fields: fc.array(
      fc.record({ who: fc.nat(), doc: fc.nat(), type: fieldTypeArb, required: fc.boolean() }),
      { maxLength: 6 },
    ),
    readyToSend: fc.oneof({ weight: 3, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
    expiresInMs: fc.option(fc.integer({ min: -HOUR, max: 6 * HOUR }), { nil: null }),
  })
  .map((s) => {
    const docCount = s.readyToSend ? Math.max(1, s.docCount) : s.docCount;
    const documentIds = Array.from({ length: docCount }, (_, i) => `doc_${i}`);
    const recipients = s.recipients.map((r, i) => recipient(`rcp_${i}`, r.role, r.order, 'PENDING', r.authentication));
    const signerIds = recipients.filter((r) => r.role === 'signer').map((r) => r.id);
    const fields: Field[] = [];
    if (documentIds.length > 0 && signerIds.length > 0) {
      for (const f of s.fields)
        fields.push(
          field(`fld_${fields.length}`, documentIds[f.doc % documentIds.length]!, signerIds[f.who % signerIds.length]!, f.type, f.required),
        );
      if (s.readyToSend)
        for (const id of signerIds)
          if (!fields.some((f) => f.recipientId === id && f.type === 'signature'))
            fields.push(field(`fld_${fields.length}`, documentIds[0]!, id, 'signature'));
    }
    return baseRequest({
      documentIds,
      recipients,
      fields,
      signingOrder: s.signingOrder,
      expiresAt: s.expiresInMs === null ? null : iso(T0 + s.expiresInMs),
    });
  });

/** A request just sent: documents, at least one signer, and a signature field for each signer. */
export const sentRequestArb: fc.Arbitrary<SignatureRequest> = draftRequestArb.map((r) => {
  const documentIds = r.documentIds.length > 0 ? r.documentIds : ['doc_0'];
  const recipients = r.recipients.some((x) => x.role === 'signer') ? r.recipients : [...r.recipients, recipient('rcp_s', 'signer', 1)];
  const fields = [...r.fields];
  for (const x of recipients)
    if (x.role === 'signer' && !fields.some((f) => f.recipientId === x.id && f.type === 'signature'))
      fields.push(field(`fld_${fields.length}`, documentIds[0]!, x.id, 'signature'));
  return { ...r, documentIds, recipients, fields, status: 'SENT' as const, sentAt: iso(T0), expiresAt: null, version: 2 };
});

/** A request in a terminal state, with recipients in any state; a COMPLETED one is sealed or not. */
export const terminalRequestArb: fc.Arbitrary<SignatureRequest> = fc
  .tuple(
    draftRequestArb,
    fc.constantFrom(...TERMINAL_REQUEST_STATUSES),
    fc.array(fc.constantFrom(...RECIPIENT_STATUSES), { minLength: 4, maxLength: 4 }),
    fc.boolean(),
  )
  .map(([r, status, statuses, sealed]) => ({
    ...r,
    status,
    sentAt: iso(T0),
    recipients: r.recipients.map((x, i) =>
      x.role === 'cc' ? x : recipient(x.id, x.role, x.order, statuses[i]!, x.authentication),
    ),
    certificateId: status === 'COMPLETED' ? 'coc_1' : null,
    finishedSha256: status === 'COMPLETED' && sealed ? 'f'.repeat(64) : null,
  }));

/**
 * A command as generated, before it meets a state: recipients are picked by position (`who`, modulo the
 * recipients present plus one unknown id) or as "one whose turn it is" (`due`), so that sequences stay
 * meaningful however the request has evolved.
 */
export type CommandSpec =
  | { readonly type: 'AddRecipient'; readonly role: RecipientRole; readonly order: number; readonly authentication: AuthenticationMethod }
  | { readonly type: 'AddField'; readonly who: number; readonly doc: number; readonly fieldType: FieldType; readonly required: boolean }
  | { readonly type: 'Send' }
  | { readonly type: 'Cancel' }
  | { readonly type: 'Expire' }
  | { readonly type: 'Notify' | 'Open' | 'View'; readonly who: number }
  | {
      readonly type: 'Sign';
      readonly who: number | 'due';
      /** `autoGiven`: a value for a field the state machine fills itself (signature, date signed). */
      readonly fill: 'complete' | 'omitRequired' | 'blank' | 'foreign' | 'autoGiven' | 'noSignature';
      readonly signatureKind: AdoptedSignature['kind'];
    }
  | { readonly type: 'Decline'; readonly who: number; readonly reason: string }
  /** `due`: a signer whose turn it is, preferring one who still has to identify. */
  | { readonly type: 'IssueOtp' | 'FailAuthentication' | 'Authenticate'; readonly who: number | 'due' }
  | { readonly type: 'Seal' };

const whoArb = fc.oneof({ weight: 3, arbitrary: fc.constant('due' as const) }, { weight: 1, arbitrary: fc.nat(8) });

export const commandSpecArb: fc.Arbitrary<CommandSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('AddRecipient' as const), role: roleArb, order: orderArb, authentication: authenticationArb }) },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('AddField' as const),
      who: fc.nat(8),
      doc: fc.nat(3),
      fieldType: fc.oneof(fc.constant<FieldType>('signature'), fieldTypeArb),
      required: fc.boolean(),
    }),
  },
  { weight: 6, arbitrary: fc.constant({ type: 'Send' as const }) },
  { weight: 1, arbitrary: fc.constant({ type: 'Cancel' as const }) },
  { weight: 2, arbitrary: fc.constant({ type: 'Expire' as const }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constantFrom('Notify' as const, 'Open' as const, 'View' as const), who: fc.nat(8) }) },
  {
    weight: 20,
    arbitrary: fc.record({
      type: fc.constant('Sign' as const),
      who: whoArb,
      fill: fc.oneof(
        { weight: 5, arbitrary: fc.constant('complete' as const) },
        { weight: 1, arbitrary: fc.constantFrom('omitRequired' as const, 'blank' as const, 'foreign' as const, 'autoGiven' as const, 'noSignature' as const) },
      ),
      signatureKind: fc.constantFrom('typed' as const, 'drawn' as const),
    }),
  },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('Decline' as const), who: fc.nat(8), reason: fc.string({ maxLength: 20 }) }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('IssueOtp' as const), who: whoArb }) },
  // Failures outweigh successes, so that some recipients get locked out.
  { weight: 10, arbitrary: fc.record({ type: fc.constant('FailAuthentication' as const), who: whoArb }) },
  { weight: 4, arbitrary: fc.record({ type: fc.constant('Authenticate' as const), who: whoArb }) },
  { weight: 3, arbitrary: fc.constant({ type: 'Seal' as const }) },
);

/** A request just sent whose every signer must identify (by e-mailed code or access code). */
export const identifyingRequestArb: fc.Arbitrary<SignatureRequest> = sentRequestArb.map((r) => ({
  ...r,
  recipients: r.recipients.map((x, i) =>
    x.role === 'signer' ? recipient(x.id, x.role, x.order, 'PENDING', i % 2 === 0 ? 'email_otp' : 'access_code') : x,
  ),
}));

/** Commands around identification, signing and sealing only, so that lock-outs and seals happen often. */
export const identificationCommandArb: fc.Arbitrary<CommandSpec> = fc.oneof(
  { weight: 3, arbitrary: fc.record({ type: fc.constant('IssueOtp' as const), who: whoArb }) },
  { weight: 9, arbitrary: fc.record({ type: fc.constant('FailAuthentication' as const), who: whoArb }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('Authenticate' as const), who: whoArb }) },
  {
    weight: 6,
    arbitrary: fc.record({
      type: fc.constant('Sign' as const),
      who: whoArb,
      fill: fc.constant('complete' as const),
      signatureKind: fc.constantFrom('typed' as const, 'drawn' as const),
    }),
  },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('Decline' as const), who: fc.nat(8), reason: fc.constant('no') }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constantFrom('Notify' as const, 'Open' as const, 'View' as const), who: fc.nat(8) }) },
  { weight: 2, arbitrary: fc.constant({ type: 'Seal' as const }) },
);

/** Milliseconds between two commands. */
export const stepDelayArb = fc.integer({ min: 0, max: 30 * 60_000 });

// ---------------------------------------------------------------- cursors

/** One ASCII character, control characters and DEL included. */
export const asciiChar = fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c));
export const asciiString = (maxLength = 40) => fc.string({ unit: asciiChar, maxLength });

export const cursorPayloadArb = fc.record({
  list: asciiString(20),
  order: fc.constantFrom('asc' as const, 'desc' as const),
  filter: asciiString(),
  createdAt: fc.oneof(
    fc.integer({ min: 0, max: 4_102_444_800_000 }).map(iso),
    asciiString(),
  ),
  id: fc.oneof(fc.stringMatching(/^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/), asciiString()),
});

/** Any single character, ASCII or not, to splice into a cursor. */
export const anyCharArb = fc.oneof(asciiChar, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 }));

// ---------------------------------------------------------------- pagination

/** Small time ranges so that many rows share a createdAt and the id has to break ties. */
export const collidingTimeArb = fc.integer({ min: 0, max: 5 }).map((s) => iso(T0 + s * 1000));

export const rowIdArb = (prefix: string) => fc.stringMatching(/^[0-9A-Z]{6}$/).map((s) => `${prefix}_${s}`);

export const pageSizeArb = fc.oneof(fc.integer({ min: 1, max: 10 }), fc.integer({ min: 1, max: 100 }));

/** Everything that is not an integer from 1 to 100. */
export const invalidLimitArb = fc.oneof(
  fc.constantFrom(0, 101, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 100.5, 0.5),
  fc.integer({ max: 0 }),
  fc.integer({ min: 101 }),
  fc.double({ min: -1000, max: 1000, noNaN: true }).filter((d) => !Number.isInteger(d)),
);

export const documentRow = (id: string, createdAt: string, tenant: Tenant = TENANT, status: DocumentStatus = 'UPLOADED'): Document => ({
  id,
  orgId: tenant.orgId,
  mode: tenant.mode,
  name: `${id}.pdf`,
  status,
  pageCount: 1,
  pageSizes: [{ width: 612, height: 792 }],
  sizeBytes: 100,
  sha256: '0'.repeat(64),
  signatureRequestId: null,
  createdAt,
});

export const requestStatusArb: fc.Arbitrary<RequestStatus> = fc.constantFrom(...REQUEST_STATUSES);

/** Rows of the caller's tenant, with unique ids and colliding creation times. */
export const rowsArb = (prefix: string, maxLength: number) =>
  fc.uniqueArray(fc.record({ id: rowIdArb(prefix), createdAt: collidingTimeArb }), {
    selector: (r) => r.id,
    maxLength,
    // Large enough to need many pages and to make createdAt collide often.
    size: 'medium',
  });

// ---------------------------------------------------------------- idempotency

export const fingerprintArb = fc.stringMatching(/^[0-9a-f]{8}$/);

/** A record positioned in time relative to `now` by offsets, so every decision branch is reachable. */
export const idempotencyRecordArb = fc
  .record({
    fingerprint: fingerprintArb,
    state: fc.constantFrom('in_progress' as const, 'completed' as const),
    createdOffset: fc.integer({ min: -48 * HOUR, max: 0 }),
    lockOffset: fc.integer({ min: -2 * 60_000, max: 2 * 60_000 }),
    expiresOffset: fc.oneof(fc.integer({ min: -2 * HOUR, max: 48 * HOUR }), fc.constantFrom(-1, 0, 1)),
    key: fc.string({ minLength: 1, maxLength: 20 }),
  })
  .map((s) => ({ spec: s, at: (now: number): IdempotencyRecord => ({
    tenant: TENANT,
    key: s.key,
    fingerprint: s.fingerprint,
    state: s.state,
    response: s.state === 'completed' ? { status: 200, body: '{}', headers: {} } : null,
    createdAt: iso(now + s.createdOffset),
    lockedUntil: iso(now + s.lockOffset),
    expiresAt: iso(now + s.expiresOffset),
  }) }));

export const nowArb = fc.integer({ min: T0, max: T0 + 365 * 24 * HOUR });

/** JSON values without -0, which JSON itself cannot tell from 0. */
export const jsonArb = fc.jsonValue({ maxDepth: 4 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);

// ---------------------------------------------------------------- rate limiting

export const windowMsArb = fc.integer({ min: 1, max: 10_000 });
export const limitArb = fc.integer({ min: 1, max: 8 });
/** Gaps between calls: often zero (bursts), sometimes longer than any window. */
export const gapsArb = fc.array(fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 20_000 })), {
  maxLength: 80,
});
