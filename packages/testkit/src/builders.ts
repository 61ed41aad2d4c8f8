import type {
  ApiKey,
  ApiLogEntry,
  DeliveryAttempt,
  Document,
  DomainEvent,
  EvidenceEntry,
  IdempotencyRecord,
  NewJob,
  Org,
  SignatureRequest,
  SigningLink,
  EmbedSession,
  StoreError,
  StoredMail,
  Tenant,
  WebhookDelivery,
  WebhookEndpoint,
  JobPayloads,
  JobWork,
} from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import type { TaskEither } from 'fp-ts/lib/TaskEither.js';

/** Three tenants that differ by org only or by mode only: enough to prove both kinds of isolation. */
export const TENANT_A: Tenant = { orgId: 'org_AAAAAAAAAAAAAAAAAAAAAAAAAA', mode: 'test' };
export const TENANT_A_LIVE: Tenant = { orgId: TENANT_A.orgId, mode: 'live' };
export const TENANT_B: Tenant = { orgId: 'org_BBBBBBBBBBBBBBBBBBBBBBBBBB', mode: 'test' };

const BASE_MS = Date.UTC(2026, 10, 23, 8, 0, 0, 0);

/** `2026-11-23T08:00:00.000Z` plus `seconds` (fractions allowed), in the stores' canonical ISO form. */
export const at = (seconds: number): string => new Date(BASE_MS + Math.round(seconds * 1000)).toISOString();

let counter = 0;
/** A fresh id with the given prefix and 26 characters, like the real ones (ordered by creation). */
export const freshId = (prefix: string): string => `${prefix}_${(++counter).toString(36).toUpperCase().padStart(26, '0')}`;

/** Runs a store call and returns its value; fails the test with the error when it is a Left. */
export const ok = async <A>(te: TaskEither<unknown, A>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(`expected Right, got Left ${JSON.stringify(r.left, errorReplacer)}`);
  return r.right;
};

/** Runs a store call that must fail and returns its error. */
export const fails = async <L, A>(te: TaskEither<L, A>): Promise<L> => {
  const r = await te();
  if (E.isRight(r)) throw new Error(`expected Left, got Right ${JSON.stringify(r.right)}`);
  return r.left;
};

/** Tag of a StoreError, or of any tagged error value (for `expect(...).toBe('ConcurrentModification')`). */
export const tagOf = (e: unknown): string | undefined =>
  typeof e === 'object' && e !== null && '_tag' in e ? String((e as StoreError)._tag) : undefined;

const errorReplacer = (_k: string, v: unknown) => (v instanceof Error ? `${v.name}: ${v.message}` : v);

export const makeOrg = (over: Partial<Org> = {}): Org => {
  const id = freshId('org');
  return { id, name: `Org ${id}`, createdAt: at(0), ...over };
};

export const makeDocument = (tenant: Tenant, over: Partial<Document> = {}): Document => ({
  id: freshId('doc'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  name: 'Arbeitsvertrag – Müller ✍️.pdf',
  status: 'UPLOADED',
  pageCount: 3,
  // Letter, A4 (not whole points) and a landscape page: sizes must come back exactly.
  pageSizes: [
    { width: 612, height: 792 },
    { width: 595.28, height: 841.89 },
    { width: 792, height: 612 },
  ],
  sizeBytes: 48_213,
  sha256: 'a'.repeat(63) + 'f',
  signatureRequestId: null,
  createdAt: at(0),
  ...over,
});

/**
 * A request with every optional part filled in (recipients with and without identification, a pending
 * code and an adopted signature, fields of each value kind), so a round trip that drops or alters
 * anything nested shows up.
 */
export const makeSignatureRequest = (tenant: Tenant, over: Partial<SignatureRequest> = {}): SignatureRequest => {
  const docId = freshId('doc');
  const signer = freshId('rcp');
  const cc = freshId('rcp');
  const otpSigner = freshId('rcp');
  return {
    id: freshId('req'),
    orgId: tenant.orgId,
    mode: tenant.mode,
    title: 'Lease «Rue de la Paix» 🏠',
    message: 'Please sign by Friday.\nThanks!',
    status: 'DRAFT',
    documentIds: [docId],
    recipients: [
      {
        id: signer,
        email: 'ana@example.com',
        firstName: 'Ana',
        lastName: 'Muñoz',
        role: 'signer',
        order: 1,
        authentication: 'access_code',
        accessCodeHash: 'c'.repeat(64),
        status: 'SIGNED',
        signedAt: at(30.5),
        declinedAt: null,
        declineReason: null,
        authenticatedAt: at(29.25),
        otp: null,
        authFailures: 2,
        otpSentAt: [],
        signature: { kind: 'drawn', value: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==' },
      },
      {
        id: cc,
        email: 'bo@example.com',
        firstName: 'Bo',
        lastName: 'Ek',
        role: 'cc',
        order: 2,
        authentication: 'none',
        accessCodeHash: null,
        status: 'DECLINED',
        signedAt: null,
        declinedAt: at(40),
        declineReason: 'Wrong address',
        authenticatedAt: null,
        otp: null,
        authFailures: 0,
        otpSentAt: [],
        signature: null,
      },
      {
        id: otpSigner,
        email: 'cy@example.com',
        firstName: 'Cy',
        lastName: 'Øster',
        role: 'signer',
        order: 3,
        authentication: 'email_otp',
        accessCodeHash: null,
        status: 'OPENED',
        signedAt: null,
        declinedAt: null,
        declineReason: null,
        authenticatedAt: null,
        otp: { codeHash: 'e'.repeat(64), expiresAt: at(650) },
        authFailures: 4,
        otpSentAt: [],
        signature: null,
      },
    ],
    fields: [
      { id: freshId('fld'), documentId: docId, recipientId: signer, type: 'signature', page: 1, x: 72.5, y: 700.25, width: 180, height: 36, required: true, value: 'Ana Muñoz' },
      { id: freshId('fld'), documentId: docId, recipientId: signer, type: 'checkbox', page: 2, x: 10, y: 20, width: 12, height: 12, required: false, value: true },
      { id: freshId('fld'), documentId: docId, recipientId: signer, type: 'checkbox', page: 2, x: 10, y: 40, width: 12, height: 12, required: false, value: false },
      { id: freshId('fld'), documentId: docId, recipientId: cc, type: 'text', page: 3, x: 0, y: 0, width: 100, height: 20, required: false, value: null },
    ],
    signingOrder: 'sequential',
    requestedSignatureLevel: 'SES',
    expiresAt: at(86_400),
    createdAt: at(0),
    sentAt: at(10),
    completedAt: null,
    cancelledAt: null,
    declinedAt: at(40),
    expiredAt: null,
    certificateId: freshId('coc'),
    finishedSha256: 'b'.repeat(64),
    version: 1,
    ...over,
  };
};

export const makeApiKey = (tenant: Tenant, over: Partial<ApiKey> = {}): ApiKey => {
  const id = freshId('key');
  return {
    id,
    orgId: tenant.orgId,
    mode: tenant.mode,
    name: 'CI key',
    prefix: `esig_${tenant.mode}_ab12`,
    // Distinct per key, as SHA-256 digests of distinct secrets are.
    secretHash: `hash_of_${id}`,
    scopes: ['documents:read', 'signature_requests:write'],
    createdAt: at(0),
    revokedAt: null,
    ...over,
  };
};

export const makeEvent = (tenant: Tenant, over: Partial<DomainEvent> = {}): DomainEvent => ({
  id: freshId('evt'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  type: 'request.sent',
  createdAt: at(0),
  data: { request_id: 'req_1', status: 'SENT', document_ids: ['doc_1', 'doc_2'], nested: { n: 1.5, ok: true, none: null } },
  redeliveryOf: null,
  ...over,
});

export const makeIdempotencyRecord = (tenant: Tenant, over: Partial<IdempotencyRecord> = {}): IdempotencyRecord => ({
  tenant,
  key: `key-${freshId('k')}`,
  fingerprint: 'POST /api/v1/documents\nsha256:' + '0'.repeat(64),
  state: 'in_progress',
  response: null,
  createdAt: at(0),
  lockedUntil: at(60),
  expiresAt: at(86_400),
  ...over,
});

/** A payload for each kind, with non-ASCII text so encoding slips show. */
const JOB_PAYLOADS: JobPayloads = {
  'mail.invite': { requestId: 'req_1 Grüße ✍️', recipientId: 'rcp_1' },
  'mail.remind': { requestId: 'req_1', recipientId: 'rcp_1' },
  'mail.completed': { requestId: 'req_1', recipientId: 'rcp_1' },
  'seal.complete': { requestId: 'req_1' },
  seal: { requestId: 'req_1' },
  expire: { requestId: 'req_1' },
  'remind.auto': { requestId: 'req_1', round: 2 },
  'webhook.dispatch': { eventId: 'evt_1' },
  'webhook.deliver': { deliveryId: 'dlv_1' },
};

/**
 * A job due at once, without a dedupe key: a `mail.invite` unless `over` names a kind (with its payload,
 * or the kind's default one).
 */
export const makeJob = (tenant: Tenant, over: Partial<Omit<NewJob, 'kind' | 'payload'>> & Partial<JobWork> = {}): NewJob => {
  const kind = over.kind ?? 'mail.invite';
  return {
    id: freshId('job'),
    orgId: tenant.orgId,
    mode: tenant.mode,
    runAt: at(0),
    dedupeKey: null,
    createdAt: at(0),
    ...over,
    kind,
    payload: over.payload ?? JOB_PAYLOADS[kind],
  } as NewJob;
};

export const makeSigningLink = (tenant: Tenant, over: Partial<SigningLink> = {}): SigningLink => ({
  // Distinct per link, as SHA-256 digests of distinct tokens are.
  tokenHash: `sha256_of_${freshId('tok')}`,
  orgId: tenant.orgId,
  mode: tenant.mode,
  requestId: freshId('req'),
  recipientId: freshId('rcp'),
  createdAt: at(0),
  expiresAt: at(86_400),
  ...over,
});

export const makeEmbedSession = (tenant: Tenant, over: Partial<EmbedSession> = {}): EmbedSession => ({
  id: freshId('ses'),
  tokenHash: `sha256_of_${freshId('tok')}`,
  orgId: tenant.orgId,
  mode: tenant.mode,
  requestId: freshId('req'),
  recipientId: freshId('rcp'),
  origin: 'https://app.example.com',
  createdAt: at(0),
  expiresAt: at(300),
  usedAt: null,
  ...over,
});

export const makeEvidence = (tenant: Tenant, over: Partial<EvidenceEntry> = {}): EvidenceEntry => ({
  id: freshId('evd'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  requestId: 'req_1',
  recipientId: 'rcp_1',
  action: 'signed',
  at: at(0),
  ip: '2001:db8::7',
  userAgent: 'Mozilla/5.0 (X11; Linux x86_64) «Test» ✓',
  details: { document_sha256: 'a'.repeat(64), reason: 'Falsche Adresse – bitte prüfen' },
  ...over,
});

export const makeStoredMail = (tenant: Tenant, over: Partial<StoredMail> = {}): StoredMail => {
  const id = freshId('msg');
  return {
    id,
    orgId: tenant.orgId,
    mode: tenant.mode,
    to: 'ana@example.com',
    subject: 'Bitte unterschreiben: «Mietvertrag» ✍️',
    text: 'Hello Ana,\n\nplease sign: https://esig.example/s/abc\n',
    html: '<p>Hello Ana,</p><p><a href="https://esig.example/s/abc">Sign</a></p>',
    messageId: `<${id}@esig.example>`,
    createdAt: at(0),
    ...over,
  };
};

/**
 * An enabled endpoint with two secrets, the current one and a rotated one still in its overlap window,
 * and a description with non-ASCII text, so a round trip that drops or alters a nested field shows up.
 */
export const makeWebhookEndpoint = (tenant: Tenant, over: Partial<WebhookEndpoint> = {}): WebhookEndpoint => ({
  id: freshId('whe'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  url: 'https://hooks.example.com/esig?source=«test»',
  events: ['request.sent', 'request.completed'],
  description: 'ERP – Verträge ✍️',
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  secrets: [
    { sealed: `sealed:${freshId('sec')}`, createdAt: at(50), retiresAt: null },
    { sealed: `sealed:${freshId('sec')}`, createdAt: at(0), retiresAt: at(86_450) },
  ],
  consecutiveFinalFailures: 0,
  failingSince: null,
  createdAt: at(0),
  updatedAt: at(50),
  version: 1,
  ...over,
});

/** A pending delivery waiting for its first attempt; the body is JSON with non-ASCII text, as sent. */
export const makeDelivery = (tenant: Tenant, over: Partial<WebhookDelivery> = {}): WebhookDelivery => {
  const eventId = freshId('evt');
  return {
    id: freshId('dlv'),
    orgId: tenant.orgId,
    mode: tenant.mode,
    endpointId: freshId('whe'),
    eventId,
    eventType: 'request.sent',
    body: JSON.stringify({ id: eventId, type: 'request.sent', data: { request_id: 'req_1', note: 'Grüße ✍️' } }),
    status: 'pending',
    attempts: 0,
    nextAttemptAt: at(0),
    lastAttemptAt: null,
    lastOutcome: null,
    createdAt: at(0),
    version: 1,
    ...over,
  };
};

/** A failed attempt with a response excerpt (non-ASCII included). */
export const makeAttempt = (tenant: Tenant, over: Partial<DeliveryAttempt> = {}): DeliveryAttempt => ({
  id: freshId('dla'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  deliveryId: freshId('dlv'),
  endpointId: freshId('whe'),
  eventId: freshId('evt'),
  eventType: 'request.sent',
  attempt: 2,
  outcome: '503',
  succeeded: false,
  durationMs: 1_234,
  responseBody: '<h1>Service indisponible – réessayez</h1>',
  createdAt: at(0),
  ...over,
});

/** An API call made with a key. */
export const makeLogEntry = (tenant: Tenant, over: Partial<ApiLogEntry> = {}): ApiLogEntry => ({
  id: freshId('log'),
  orgId: tenant.orgId,
  mode: tenant.mode,
  kind: 'api',
  method: 'POST',
  target: '/api/v1/signature_requests',
  status: 201,
  outcome: '201',
  durationMs: 37,
  keyId: freshId('key'),
  oauthClientId: null,
  createdAt: at(0),
  ...over,
});
