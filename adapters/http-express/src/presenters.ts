import type { ApiKey, Document, DomainEvent, Field, Recipient, SignatureRequest } from '@esig/core';
import type { ApiKeyResource, DocumentResource, EventResource, FieldResource, RecipientResource, SignatureRequestResource } from './codecs';

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

export const presentField = (f: Field): FieldResource => ({ ...f });

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
