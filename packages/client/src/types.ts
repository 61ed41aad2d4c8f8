// Names for the generated types, as a user of the client spells them. Everything here is derived from
// generated/api-types.ts: nothing is written out by hand a second time.
import type {
  ApiKey,
  Document,
  Event,
  Field,
  Operations,
  Recipient,
  SignatureRequest,
  WebhookDelivery,
  WebhookEndpoint,
} from './generated/api-types.js';

export type {
  ApiKey,
  CertificateData,
  CreatedApiKey,
  CreatedWebhookEndpoint,
  DeliveryAttempt,
  Document,
  EmbeddedSession,
  ErrorCode,
  Event,
  Field,
  LogEntry,
  Operations,
  PageInfo,
  Problem,
  Recipient,
  RotatedSecret,
  SignatureRequest,
  TestMail,
  WebhookDelivery,
  WebhookEndpoint,
} from './generated/api-types.js';

export type DocumentId = Document['id'];
export type SignatureRequestId = SignatureRequest['id'];
export type RecipientId = Recipient['id'];
export type FieldId = Field['id'];
export type ApiKeyId = ApiKey['id'];
export type WebhookEndpointId = WebhookEndpoint['id'];
export type WebhookDeliveryId = WebhookDelivery['id'];
export type CertificateId = NonNullable<SignatureRequest['certificateId']>;

export type DocumentStatus = Document['status'];
export type SignatureRequestStatus = SignatureRequest['status'];
export type RecipientStatus = Recipient['status'];
export type FieldType = Field['type'];
export type EventType = Event['type'];
export type Scope = ApiKey['scopes'][number];

export type DocumentUploadParams = { readonly name: string };
export type SignatureRequestCreateParams = Operations['createSignatureRequest']['body'];
export type RecipientCreateParams = Operations['addRecipient']['body'];
export type FieldCreateParams = Operations['addField']['body'];
export type EmbeddedSessionCreateParams = Operations['createEmbeddedSession']['body'];
export type WebhookEndpointCreateParams = Operations['createWebhookEndpoint']['body'];
export type WebhookEndpointUpdateParams = Operations['updateWebhookEndpoint']['body'];
export type ApiKeyCreateParams = Operations['createApiKey']['body'];

export type DocumentListParams = Operations['listDocuments']['query'];
export type SignatureRequestListParams = Operations['listSignatureRequests']['query'];
export type EventListParams = Operations['listEvents']['query'];
export type WebhookEndpointListParams = Operations['listWebhookEndpoints']['query'];
export type WebhookDeliveryListParams = Operations['listWebhookDeliveries']['query'];
export type ApiKeyListParams = Operations['listApiKeys']['query'];
export type LogListParams = Operations['listLogs']['query'];
export type TestMailboxListParams = Operations['listTestMailbox']['query'];

