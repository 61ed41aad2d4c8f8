import type { CreatedEmbedSession, ApiKey, ApiLogEntry, CertificateData, DeliveryAttempt, Document, DomainEvent, Field, Recipient, SignatureRequest, WebhookDelivery, WebhookEndpoint } from '@esig/core';
import type * as t from 'io-ts';
import type { ApiKeyResource, EmbeddedSessionResource, DocumentResource, EventResource, FieldResource, RecipientResource, SignatureRequestResource } from './codecs.js';
import type { ApiLogResource, CertificateDataResource, DeliveryAttemptResource, WebhookDeliveryResource, WebhookEndpointResource } from './codecs.js';

// Domain records → API representations (camelCase, `testMode` instead of the internal mode). Typed against
// the response codecs, so a representation cannot drift from the OpenAPI document without a compile error.

export const presentDocument = (d: Document): DocumentResource => ({
  id: d.id,
  name: d.name,
  status: d.status,
  pageCount: d.pageCount,
  sizeBytes: d.sizeBytes,
  sha256: d.sha256,
  signatureRequestId: d.signatureRequestId,
  createdAt: d.createdAt,
  testMode: d.mode === 'test',
});

export const presentSignatureRequest = (r: SignatureRequest): SignatureRequestResource => ({
  id: r.id,
  title: r.title,
  message: r.message,
  status: r.status,
  documentIds: [...r.documentIds],
  recipients: r.recipients.map(presentRecipient),
  fields: r.fields.map(presentField),
  signingOrder: r.signingOrder,
  requestedSignatureLevel: r.requestedSignatureLevel,
  expiresAt: r.expiresAt,
  createdAt: r.createdAt,
  sentAt: r.sentAt,
  completedAt: r.completedAt,
  cancelledAt: r.cancelledAt,
  declinedAt: r.declinedAt,
  expiredAt: r.expiredAt,
  certificateId: r.certificateId,
  testMode: r.mode === 'test',
});

/** The access-code hash and the decline reason stay internal. */
export const presentRecipient = (x: Recipient): RecipientResource => ({
  id: x.id,
  email: x.email,
  firstName: x.firstName,
  lastName: x.lastName,
  role: x.role,
  order: x.order,
  authentication: x.authentication,
  status: x.status,
  signedAt: x.signedAt,
  declinedAt: x.declinedAt,
});

export const presentField = (f: Field): FieldResource => ({
  id: f.id,
  documentId: f.documentId,
  recipientId: f.recipientId,
  type: f.type,
  page: f.page,
  x: f.x,
  y: f.y,
  width: f.width,
  height: f.height,
  required: f.required,
  value: f.value,
});

export const presentApiKey = (k: ApiKey): ApiKeyResource => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  scopes: [...k.scopes],
  testMode: k.mode === 'test',
  createdAt: k.createdAt,
  revokedAt: k.revokedAt,
});

export const presentEvent = (e: DomainEvent): EventResource => ({
  id: e.id,
  type: e.type,
  createdAt: e.createdAt,
  testMode: e.mode === 'test',
  data: { ...e.data },
  redeliveryOf: e.redeliveryOf,
});

/** Secrets never appear here; they are shown once, by the create and rotate calls. */
export const presentEndpoint = (e: WebhookEndpoint): t.TypeOf<typeof WebhookEndpointResource> => ({
  id: e.id,
  url: e.url,
  events: [...e.events],
  description: e.description,
  enabled: e.enabled,
  disabledReason: e.disabledReason,
  disabledAt: e.disabledAt,
  createdAt: e.createdAt,
  updatedAt: e.updatedAt,
  testMode: e.mode === 'test',
});

export const presentDelivery = (d: WebhookDelivery): t.TypeOf<typeof WebhookDeliveryResource> => ({
  id: d.id,
  endpointId: d.endpointId,
  eventId: d.eventId,
  eventType: d.eventType,
  status: d.status,
  attempts: d.attempts,
  nextAttemptAt: d.nextAttemptAt,
  lastAttemptAt: d.lastAttemptAt,
  lastOutcome: d.lastOutcome,
  createdAt: d.createdAt,
  testMode: d.mode === 'test',
});

export const presentAttempt = (a: DeliveryAttempt): t.TypeOf<typeof DeliveryAttemptResource> => ({
  id: a.id,
  deliveryId: a.deliveryId,
  endpointId: a.endpointId,
  eventId: a.eventId,
  eventType: a.eventType,
  attempt: a.attempt,
  status: a.outcome,
  succeeded: a.succeeded,
  durationMs: a.durationMs,
  responseBody: a.responseBody,
  createdAt: a.createdAt,
});

export const presentLogEntry = (l: ApiLogEntry): t.TypeOf<typeof ApiLogResource> => ({
  id: l.id,
  kind: l.kind,
  method: l.method,
  target: l.target,
  status: l.status,
  outcome: l.outcome,
  durationMs: l.durationMs,
  keyId: l.keyId,
  oauthClientId: l.oauthClientId,
  createdAt: l.createdAt,
  testMode: l.mode === 'test',
});

/** The certificate's data as its PDF renders it; the recipients' addresses are the sender's own data. */
export const presentCertificateData = (d: CertificateData): CertificateDataResource => ({
  certificateId: d.certificateId,
  requestId: d.requestId,
  title: d.title,
  testMode: d.testMode,
  requestedSignatureLevel: d.requestedSignatureLevel,
  createdAt: d.createdAt,
  sentAt: d.sentAt,
  completedAt: d.completedAt,
  documents: d.documents.map((x) => ({ id: x.id, name: x.name, pageCount: x.pageCount, sha256: x.sha256 })),
  finishedDocumentSha256: d.finishedDocumentSha256,
  recipients: d.recipients.map((r) => ({ id: r.id, name: r.name, email: r.email, role: r.role, authentication: r.authentication, signedAt: r.signedAt, signatureKind: r.signatureKind })),
  events: d.events.map((e) => ({ at: e.at, action: e.action, recipientId: e.recipientId, actor: e.actor, ip: e.ip, userAgent: e.userAgent, details: { ...e.details } })),
});

/** The session with its URL; the token appears here once, in `url`, and nowhere else. */
export const presentEmbeddedSession = (x: CreatedEmbedSession, publicUrl: string): EmbeddedSessionResource => ({
  id: x.session.id,
  url: `${publicUrl.replace(/\/+$/, '')}/embed/${x.token}`,
  origin: x.session.origin,
  requestId: x.session.requestId,
  recipientId: x.session.recipientId,
  expiresAt: x.session.expiresAt,
  createdAt: x.session.createdAt,
});
