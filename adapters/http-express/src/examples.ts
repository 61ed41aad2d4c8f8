import type * as t from 'io-ts';
import * as c from './codecs.js';
import type { ProblemCode } from './problem.js';
import { PROBLEMS, problemType } from './problem.js';

// Examples for the OpenAPI document: one value per codec a route sends or accepts as JSON, so every operation
// shows what goes over the wire. They are checked against the generated schemas (by the OpenAPI linter and
// by a test), so an example cannot drift from the codec it illustrates.

/** An id of the given prefix: the prefix, `_`, and 26 characters, as the id generator makes them. */
const exampleId = (prefix: string, n: number) => `${prefix}_01JDQ4ZV8W3K5M7N9P2R4T6X${String(n).padStart(2, '0')}`;

const ids = {
  doc: exampleId('doc', 1),
  doc2: exampleId('doc', 2),
  req: exampleId('req', 1),
  rcp: exampleId('rcp', 1),
  fld: exampleId('fld', 1),
  coc: exampleId('coc', 1),
  key: exampleId('key', 1),
  whe: exampleId('whe', 1),
  dlv: exampleId('dlv', 1),
  dlvAttempt: exampleId('dlv', 2),
  log: exampleId('log', 1),
  evt: exampleId('evt', 1),
  mail: exampleId('mail', 1),
  ses: exampleId('ses', 1),
};
const at = (minute: number) => `2026-11-23T09:${String(minute).padStart(2, '0')}:00.000Z`;
const sha = (digit: string) => digit.repeat(64);

const document = {
  id: ids.doc, name: 'sample.pdf', status: 'PENDING', pageCount: 2, sizeBytes: 48213, sha256: sha('a'),
  signatureRequestId: ids.req, createdAt: at(0), testMode: true,
};
const recipient = {
  id: ids.rcp, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', role: 'signer', order: 1,
  authentication: 'none', status: 'NOTIFIED', signedAt: null, declinedAt: null,
};
const field = {
  id: ids.fld, documentId: ids.doc, recipientId: ids.rcp, type: 'signature', page: 2, x: 72, y: 600, width: 200, height: 50,
  required: true, value: null,
};
const signatureRequest = {
  id: ids.req, title: 'Sample agreement', message: null, status: 'SENT', documentIds: [ids.doc], recipients: [recipient], fields: [field],
  signingOrder: 'parallel', requestedSignatureLevel: 'SES', expiresAt: null, createdAt: at(1), sentAt: at(4), completedAt: null,
  cancelledAt: null, declinedAt: null, expiredAt: null, certificateId: null, testMode: true,
};
const apiKey = {
  id: ids.key, name: 'reporting', prefix: 'esig_test_Xk3', scopes: ['documents:read', 'signature_requests:read'], testMode: true,
  createdAt: at(2), revokedAt: null,
};
const endpoint = {
  id: ids.whe, url: 'https://hooks.example.com/esig', events: ['request.completed', 'request.declined'], description: 'Back office',
  enabled: true, disabledReason: null, disabledAt: null, createdAt: at(3), updatedAt: at(3), testMode: true,
};
const delivery = {
  id: ids.dlv, endpointId: ids.whe, eventId: ids.evt, eventType: 'webhook.test', status: 'pending', attempts: 0, nextAttemptAt: at(5),
  lastAttemptAt: null, lastOutcome: null, createdAt: at(5), testMode: true,
};
const signerView = {
  request: { id: ids.req, title: 'Sample agreement', message: null, status: 'SENT', testMode: true, signingOrder: 'parallel', expiresAt: null },
  recipient: {
    id: ids.rcp, firstName: 'Ada', lastName: 'Lovelace', email: 'ada@example.com', role: 'signer', status: 'OPENED', authentication: 'none',
    authenticated: true, locked: false, yourTurn: true,
  },
  documents: [{ id: ids.doc, name: 'sample.pdf', pageCount: 2 }],
  fields: [field],
  everyoneSigned: false,
  finishedDocumentAvailable: false,
};

/** Example values by codec: responses, then request bodies. */
const EXAMPLES = new Map<t.Mixed, unknown>([
  [c.DocumentResource, document],
  [c.RecipientResource, recipient],
  [c.FieldResource, field],
  [c.SignatureRequestResource, signatureRequest],
  [c.ApiKeyResource, apiKey],
  [c.CreatedApiKeyResource, { ...apiKey, secret: 'esig_test_Xk3vQ9b2Lr7TzW4nYp8sHc6dFj1mKa5e' }],
  [
    c.EventResource,
    {
      id: ids.evt, type: 'request.sent', createdAt: at(4), testMode: true, redeliveryOf: null,
      data: { request_id: ids.req, status: 'SENT', sent_at: at(4), signing_order: 'parallel', document_ids: [ids.doc], recipient_ids: [ids.rcp] },
    },
  ],
  [
    c.StoredMailResource,
    {
      id: ids.mail, to: 'ada@example.com', subject: '[TEST] Please sign: Sample agreement', createdAt: at(4),
      text: 'Open http://localhost:3000/sign/… to read and sign.', html: '<p>Open <a href="http://localhost:3000/sign/…">the agreement</a> to read and sign.</p>',
      messageId: '<01JDQ4ZV8W3K5M7N9P2R4T6X01@esig>',
    },
  ],
  [c.WebhookEndpointResource, endpoint],
  [c.CreatedWebhookEndpointResource, { ...endpoint, secret: 'whsec_7dQm2Vx9Lk4Rt8Wp3Zc6Nb1Hy5Js0Fg2Ue7Ka4Mo9Ti' }],
  [c.RotatedSecretResource, { id: ids.whe, secret: 'whsec_Pq8Wn3Ls6Xd1Ry9Kt4Zm7Cb2Vh5Gj0Fu3Ea8No1Ti6', previousSecretExpiresAt: '2026-11-24T09:03:00.000Z' }],
  [c.WebhookDeliveryResource, delivery],
  [
    c.DeliveryAttemptResource,
    {
      id: ids.dlvAttempt, deliveryId: ids.dlv, endpointId: ids.whe, eventId: ids.evt, eventType: 'request.completed', attempt: 1, status: '200',
      succeeded: true, durationMs: 84, responseBody: 'ok', createdAt: at(9),
    },
  ],
  [
    c.ApiLogResource,
    {
      id: ids.log, kind: 'api', method: 'POST', target: `/api/v1/signature-requests/${ids.req}/send`, status: 200, outcome: '200', durationMs: 12,
      keyId: ids.key, oauthClientId: null, createdAt: at(4), testMode: true,
    },
  ],
  [
    c.CertificateDataResource,
    {
      certificateId: ids.coc, requestId: ids.req, title: 'Sample agreement', testMode: true, requestedSignatureLevel: 'SES', createdAt: at(1),
      sentAt: at(4), completedAt: at(8),
      documents: [{ id: ids.doc, name: 'sample.pdf', pageCount: 2, sha256: sha('a') }],
      finishedDocumentSha256: sha('b'),
      recipients: [{ id: ids.rcp, name: 'Ada Lovelace', email: 'ada@example.com', role: 'signer', authentication: 'none', signedAt: at(8), signatureKind: 'typed' }],
      events: [
        { at: at(4), action: 'sent', recipientId: null, actor: null, ip: null, userAgent: null, details: {} },
        { at: at(8), action: 'signed', recipientId: ids.rcp, actor: 'Ada Lovelace <ada@example.com>', ip: '203.0.113.7', userAgent: 'Mozilla/5.0', details: { signature: 'typed' } },
      ],
    },
  ],
  [c.SignerViewResource, signerView],
  [c.OtpSentResource, { sentTo: 'a***@example.com' }],
  [
    c.EmbeddedSessionResource,
    {
      id: ids.ses, url: 'https://sign.example.com/embed/Xk3Qp9Lm2Vr7Tz4Wn8Bd1Hf6Jc0Gs5Ya3Ue9Oi2Kq7Mv', origin: 'https://app.example.com',
      requestId: ids.req, recipientId: ids.rcp, expiresAt: '2026-11-23T09:10:00.000Z', createdAt: at(5),
    },
  ],
  [c.CreateEmbeddedSessionBody, { origin: 'https://app.example.com' }],

  [c.CreateSignatureRequestBody, { title: 'Sample agreement', documentIds: [ids.doc], signingOrder: 'parallel' }],
  [c.AddRecipientBody, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' }],
  [c.AddFieldBody, { documentId: ids.doc, recipientId: ids.rcp, type: 'signature', page: 2, x: 72, y: 600, width: 200, height: 50 }],
  [c.EmptyBody, {}],
  [c.CreateApiKeyBody, { name: 'reporting', scopes: ['documents:read', 'signature_requests:read'] }],
  [c.CreateWebhookEndpointBody, { url: 'https://hooks.example.com/esig', events: ['request.completed', 'request.declined'], description: 'Back office' }],
  [c.UpdateWebhookEndpointBody, { enabled: true }],
  [c.SignBody, { values: { [ids.fld]: true }, signature: { kind: 'typed', value: 'Ada Lovelace' } }],
  [c.DeclineBody, { reason: 'The start date is wrong.' }],
  [c.AuthenticateBody, { code: '482913' }],
]);

/** The example of a JSON body described by `codec`; a list envelope shows one entry of its item's example. */
export const exampleOf = (codec: t.Mixed): unknown => {
  const known = EXAMPLES.get(codec);
  if (known !== undefined) return known;
  const item = c.listItems.get(codec);
  if (item !== undefined) return { data: [exampleOf(item)], pageInfo: { limit: 25, order: 'desc', hasMore: true, nextCursor: 'WyIyMDI2LTExLTIzVDA5OjAwOjAwLjAwMFoiXQ.x7Kq' } };
  // The document is built when the server starts: a route without an example stops it, so none is forgotten.
  throw new Error(`No OpenAPI example for codec ${codec.name}: add one to examples.ts`);
};

const DETAILS: Record<ProblemCode, string> = {
  validation_failed: 'title must not be empty.',
  unauthenticated: 'Send Authorization: Bearer <API key>.',
  insufficient_scope: 'This call needs the scope signature_requests:write.',
  not_found: `No signature request ${ids.req}.`,
  invalid_state: 'A SENT signature request cannot be sent again.',
  idempotency_in_progress: 'A request with this Idempotency-Key is still being processed; retry shortly.',
  idempotency_key_reused: 'This Idempotency-Key was used with a different request.',
  request_timeout: 'The body did not arrive within 60 s.',
  payload_too_large: 'The body exceeds 1048576 bytes.',
  unsupported_media_type: 'Send application/json.',
  invalid_document: 'The file is encrypted.',
  rate_limited: 'Rate limit exceeded; retry after 12 s.',
  mail_unavailable: 'The code could not be mailed; ask again.',
  server_busy: 'The server has too many uploads to read now; retry after 5 s.',
  internal: 'An unexpected error occurred. Quote the requestId when reporting it.',
};

/** A problem+json body as the server sends it for `code`. */
export const problemExample = (code: ProblemCode) => ({
  type: problemType(code),
  title: PROBLEMS[code].title,
  status: PROBLEMS[code].status,
  detail: DETAILS[code],
  code,
  requestId: ids.log,
  ...(code === 'validation_failed' ? { errors: [{ path: 'title', message: 'must not be empty' }] } : {}),
});
