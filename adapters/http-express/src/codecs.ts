import * as t from 'io-ts';
import {
  API_SCOPES,
  AUTHENTICATION_METHODS,
  DOCUMENT_STATUSES,
  EVENT_TYPES,
  FIELD_TYPES,
  RECIPIENT_ROLES,
  RECIPIENT_STATUSES,
  REQUEST_STATUSES,
  SIGNING_ORDERS,
} from '@esig/core';
import { arrayOf, dateTime, dictOf, emailAddress, id, intFromQuery, nullable, num, object, oneOf, str } from './schema.js';

// ---- Requests -------------------------------------------------------------------------------------

export const DocumentId = id('doc');
export const RequestId = id('req');
export const RecipientId = id('rcp');
export const KeyId = id('key');
export const FieldId = id('fld');
export const CertificateId = id('coc');
export const LogId = id('log');
export const EmbedSessionId = id('ses');

export const ListQuery = object({}, ListQuery_props(), 'ListQuery');
export const DocumentListQuery = object({}, { ...ListQuery_props(), status: oneOf(DOCUMENT_STATUSES, 'DocumentStatus') }, 'DocumentListQuery');
export const RequestListQuery = object({}, { ...ListQuery_props(), status: oneOf(REQUEST_STATUSES, 'RequestStatus') }, 'RequestListQuery');
export const EventListQuery = object({}, { ...ListQuery_props(), type: oneOf(EVENT_TYPES, 'EventType') }, 'EventListQuery');
function ListQuery_props() {
  return { limit: intFromQuery(1, 100, 25), order: oneOf(['asc', 'desc'] as const, 'SortOrder'), cursor: str({ min: 1, max: 2000 }) };
}

export const UploadQuery = object({}, { name: str({ min: 1, max: 255 }) }, 'UploadQuery');
/** The text fields of a multipart upload (besides `file`). */
export const UploadForm = object({}, { name: str({ min: 1, max: 255 }) }, 'UploadForm');

export const CreateSignatureRequestBody = object(
  { title: str({ min: 1, max: 255 }), documentIds: arrayOf(DocumentId, { min: 1, max: 20 }) },
  { message: nullable(str({ max: 5000 })), signingOrder: oneOf(SIGNING_ORDERS, 'SigningOrder'), expiresAt: nullable(dateTime) },
  'CreateSignatureRequest',
);

export const AddRecipientBody = object(
  { email: emailAddress, firstName: str({ min: 1, max: 100 }), lastName: str({ min: 1, max: 100 }) },
  {
    role: oneOf(RECIPIENT_ROLES, 'RecipientRole'),
    order: num({ min: 1, max: 1000, integer: true }),
    authentication: oneOf(AUTHENTICATION_METHODS, 'AuthenticationMethod'),
    accessCode: str({ min: 4, max: 64 }),
  },
  'AddRecipient',
);

export const AddFieldBody = object(
  {
    documentId: DocumentId,
    recipientId: RecipientId,
    type: oneOf(FIELD_TYPES, 'FieldType'),
    page: num({ min: 1, max: 100_000, integer: true }),
    x: num({ min: 0, max: 100_000 }),
    y: num({ min: 0, max: 100_000 }),
    width: num({ min: 0, max: 100_000, exclusiveMin: true }),
    height: num({ min: 0, max: 100_000, exclusiveMin: true }),
  },
  { required: t.boolean },
  'AddField',
);

export const EmptyBody = object({}, {}, 'EmptyObject');

/** Which origins are accepted (serialized, https; loopback http in test mode) is the use case's to say. */
export const CreateEmbeddedSessionBody = object(
  { origin: str({ min: 1, max: 300, description: 'the serialized origin (`https://app.example.com`, no path) of the page that frames the signing page' }) },
  {},
  'CreateEmbeddedSession',
);

export const CreateApiKeyBody = object(
  { name: str({ min: 1, max: 100 }), scopes: arrayOf(oneOf([...API_SCOPES, '*'] as const, 'Scope'), { min: 1, max: API_SCOPES.length + 1 }) },
  {},
  'CreateApiKey',
);

export const MailboxListQuery = object({}, { ...ListQuery_props(), to: str({ min: 1, max: 254 }) }, 'MailboxListQuery');

export const EndpointId = id('whe');
export const DeliveryId = id('dlv');

const eventTypes = arrayOf(oneOf(EVENT_TYPES, 'EventType'), { min: 1, max: EVENT_TYPES.length });
// No white space or control character anywhere: the WHATWG URL parser would silently drop some of them.
const webhookUrl = str({ min: 9, max: 2048, format: 'uri', pattern: /^https:\/\/[^\x00-\x20\x7f-\x9f]+$/i, description: 'must be an https:// URL without spaces or control characters' });

export const CreateWebhookEndpointBody = object({ url: webhookUrl, events: eventTypes }, { description: nullable(str({ max: 500 })) }, 'CreateWebhookEndpoint');
export const UpdateWebhookEndpointBody = object({}, { url: webhookUrl, events: eventTypes, description: nullable(str({ max: 500 })), enabled: t.boolean }, 'UpdateWebhookEndpoint');
export const DeliveryListQuery = object({}, { ...ListQuery_props(), endpointId: EndpointId, eventId: str({ min: 1, max: 200 }) }, 'DeliveryListQuery');
export const LogListQuery = object({}, { ...ListQuery_props(), kind: oneOf(['api', 'webhook'] as const, 'LogKind') }, 'LogListQuery');

// ---- Signer API (authenticated by the link's token) ------------------------------------------------

export const SigningToken = str({ min: 43, max: 128, pattern: /^[A-Za-z0-9]+$/, description: 'must be a signing token', name: 'SigningToken' });

export const SignBody = object(
  {
    values: dictOf(str({ min: 1, max: 40 }), t.union([str({ max: 2000 }), t.boolean]), { max: 10_000, name: 'FieldValues' }),
    signature: object(
      {
        kind: oneOf(['typed', 'drawn'] as const, 'SignatureKind'),
        // A drawn signature is a PNG data URL; 200 kB is plenty for a signature pad at phone resolution.
        value: str({ min: 1, max: 200_000 }),
      },
      {},
      'AdoptedSignature',
    ),
  },
  {},
  'Sign',
);
export const DeclineBody = object({ reason: str({ min: 1, max: 1000 }) }, {}, 'Decline');
export const AuthenticateBody = object({ code: str({ min: 1, max: 64 }) }, {}, 'Authenticate');
/** Any document id is taken as given: one that is not among the link's documents is `404`, never `400`. */
export const SigningDocumentId = t.string;

// ---- Responses (the API's representations; presenters are typed against these) --------------------

const nullableTime = nullable(dateTime);

export const DocumentResource = t.type(
  {
    id: DocumentId,
    name: t.string,
    status: oneOf(DOCUMENT_STATUSES, 'DocumentStatus'),
    pageCount: num({ integer: true }),
    sizeBytes: num({ integer: true }),
    sha256: t.string,
    signatureRequestId: nullable(RequestId),
    createdAt: dateTime,
    testMode: t.boolean,
  },
  'Document',
);

export const RecipientResource = t.type(
  {
    id: RecipientId,
    email: t.string,
    firstName: t.string,
    lastName: t.string,
    role: oneOf(RECIPIENT_ROLES, 'RecipientRole'),
    order: num({ integer: true }),
    authentication: oneOf(AUTHENTICATION_METHODS, 'AuthenticationMethod'),
    status: oneOf(RECIPIENT_STATUSES, 'RecipientStatus'),
    signedAt: nullableTime,
    declinedAt: nullableTime,
  },
  'Recipient',
);

export const FieldResource = t.type(
  {
    id: FieldId,
    documentId: DocumentId,
    recipientId: RecipientId,
    type: oneOf(FIELD_TYPES, 'FieldType'),
    page: num({ integer: true }),
    x: t.number,
    y: t.number,
    width: t.number,
    height: t.number,
    required: t.boolean,
    value: t.union([t.string, t.boolean, t.null]),
  },
  'Field',
);

/** What a signer sees (docs/signer-api.md): only this recipient, and no document before identification. */
export const SignerViewResource = t.type(
  {
    request: t.type(
      {
        id: RequestId,
        title: t.string,
        message: nullable(t.string),
        status: oneOf(REQUEST_STATUSES, 'RequestStatus'),
        testMode: t.boolean,
        signingOrder: oneOf(SIGNING_ORDERS, 'SigningOrder'),
        expiresAt: nullableTime,
      },
      'SignerViewRequest',
    ),
    recipient: t.type(
      {
        id: RecipientId,
        firstName: t.string,
        lastName: t.string,
        email: t.string,
        role: oneOf(RECIPIENT_ROLES, 'RecipientRole'),
        status: oneOf(RECIPIENT_STATUSES, 'RecipientStatus'),
        authentication: oneOf(AUTHENTICATION_METHODS, 'AuthenticationMethod'),
        authenticated: t.boolean,
        locked: t.boolean,
        yourTurn: t.boolean,
      },
      'SignerViewRecipient',
    ),
    documents: t.array(t.type({ id: DocumentId, name: t.string, pageCount: num({ integer: true }) }, 'SignerViewDocument')),
    fields: t.array(FieldResource),
    everyoneSigned: t.boolean,
    finishedDocumentAvailable: t.boolean,
  },
  'SignerView',
);

export const OtpSentResource = t.type({ sentTo: t.string }, 'OtpSent');

export const SignatureRequestResource = t.type(
  {
    id: RequestId,
    title: t.string,
    message: nullable(t.string),
    status: oneOf(REQUEST_STATUSES, 'RequestStatus'),
    documentIds: t.array(DocumentId),
    recipients: t.array(RecipientResource),
    fields: t.array(FieldResource),
    signingOrder: oneOf(SIGNING_ORDERS, 'SigningOrder'),
    requestedSignatureLevel: t.literal('SES'),
    expiresAt: nullableTime,
    createdAt: dateTime,
    sentAt: nullableTime,
    completedAt: nullableTime,
    cancelledAt: nullableTime,
    declinedAt: nullableTime,
    expiredAt: nullableTime,
    certificateId: nullable(CertificateId),
    testMode: t.boolean,
  },
  'SignatureRequest',
);

export const EmbeddedSessionResource = t.type(
  {
    id: EmbedSessionId,
    url: t.string,
    origin: t.string,
    requestId: RequestId,
    recipientId: RecipientId,
    expiresAt: dateTime,
    createdAt: dateTime,
  },
  'EmbeddedSession',
);

export const ApiKeyResource = t.type(
  {
    id: KeyId,
    name: t.string,
    prefix: t.string,
    scopes: t.array(oneOf([...API_SCOPES, '*'] as const, 'Scope')),
    testMode: t.boolean,
    createdAt: dateTime,
    revokedAt: nullableTime,
  },
  'ApiKey',
);

export const CreatedApiKeyResource = t.intersection([ApiKeyResource, t.type({ secret: t.string })], 'CreatedApiKey');

export const EventResource = t.type(
  {
    id: t.string,
    type: oneOf(EVENT_TYPES, 'EventType'),
    createdAt: dateTime,
    testMode: t.boolean,
    data: t.UnknownRecord,
    redeliveryOf: nullable(t.string),
  },
  'Event',
);

export const PageInfo = t.type(
  { limit: num({ integer: true, min: 1, max: 100 }), order: oneOf(['asc', 'desc'] as const), hasMore: t.boolean, nextCursor: nullable(t.string) },
  'PageInfo',
);

/** The item codec of each list envelope codec, for the OpenAPI document's examples. */
export const listItems = new WeakMap<t.Mixed, t.Mixed>();

export const listOf = <C extends t.Mixed>(item: C) => {
  const codec = t.type({ data: t.array(item), pageInfo: PageInfo }, `${item.name}List`);
  listItems.set(codec, item);
  return codec;
};

export const Problem = t.intersection(
  [
    t.type({ type: t.string, title: t.string, status: num({ integer: true }), detail: t.string, code: t.string, requestId: LogId }),
    t.partial({ errors: t.array(t.type({ path: t.string, message: t.string })) }),
  ],
  'Problem',
);

export const StoredMailResource = t.type(
  { id: t.string, to: t.string, subject: t.string, text: t.string, html: t.string, messageId: t.string, createdAt: dateTime },
  'TestMail',
);

export const WebhookEndpointResource = t.type(
  {
    id: EndpointId,
    url: t.string,
    events: t.array(oneOf(EVENT_TYPES, 'EventType')),
    description: nullable(t.string),
    enabled: t.boolean,
    disabledReason: nullable(t.string),
    disabledAt: nullableTime,
    createdAt: dateTime,
    updatedAt: dateTime,
    testMode: t.boolean,
  },
  'WebhookEndpoint',
);
export const CreatedWebhookEndpointResource = t.intersection([WebhookEndpointResource, t.type({ secret: t.string })], 'CreatedWebhookEndpoint');
export const RotatedSecretResource = t.type({ id: EndpointId, secret: t.string, previousSecretExpiresAt: nullableTime }, 'RotatedSecret');
export const WebhookDeliveryResource = t.type(
  {
    id: DeliveryId,
    endpointId: EndpointId,
    eventId: t.string,
    eventType: t.string,
    status: oneOf(['pending', 'succeeded', 'failed', 'cancelled'] as const, 'DeliveryStatus'),
    attempts: num({ integer: true }),
    nextAttemptAt: nullableTime,
    lastAttemptAt: nullableTime,
    lastOutcome: nullable(t.string),
    createdAt: dateTime,
    testMode: t.boolean,
  },
  'WebhookDelivery',
);
export const DeliveryAttemptResource = t.type(
  {
    id: t.string,
    deliveryId: DeliveryId,
    endpointId: EndpointId,
    eventId: t.string,
    eventType: t.string,
    attempt: num({ integer: true }),
    status: t.string,
    succeeded: t.boolean,
    durationMs: num({ integer: true }),
    responseBody: t.string,
    createdAt: dateTime,
  },
  'DeliveryAttempt',
);
export const ApiLogResource = t.type(
  {
    id: LogId,
    kind: oneOf(['api', 'webhook'] as const, 'LogKind'),
    method: t.string,
    target: t.string,
    status: nullable(num({ integer: true })),
    outcome: t.string,
    durationMs: num({ integer: true }),
    keyId: nullable(KeyId),
    oauthClientId: nullable(t.string),
    createdAt: dateTime,
    testMode: t.boolean,
  },
  'LogEntry',
);

/** The evidence certificate's data (`Accept: application/json`): the same value the certificate PDF renders. */
export const CertificateDataResource = t.type(
  {
    certificateId: CertificateId,
    requestId: RequestId,
    title: t.string,
    testMode: t.boolean,
    requestedSignatureLevel: t.literal('SES'),
    createdAt: dateTime,
    sentAt: nullableTime,
    completedAt: nullableTime,
    documents: t.array(t.type({ id: DocumentId, name: t.string, pageCount: num({ integer: true }), sha256: t.string }, 'CertificateDocument')),
    finishedDocumentSha256: t.string,
    recipients: t.array(
      t.type(
        {
          id: RecipientId,
          name: t.string,
          email: t.string,
          role: oneOf(RECIPIENT_ROLES, 'RecipientRole'),
          // As the certificate records it; core types it as text.
          authentication: t.string,
          signedAt: nullableTime,
          signatureKind: nullable(oneOf(['typed', 'drawn'] as const, 'SignatureKind')),
        },
        'CertificateRecipient',
      ),
    ),
    events: t.array(
      t.type(
        {
          at: dateTime,
          action: t.string,
          recipientId: nullable(RecipientId),
          actor: nullable(t.string),
          ip: nullable(t.string),
          userAgent: nullable(t.string),
          details: t.record(t.string, t.string),
        },
        'CertificateEvent',
      ),
    ),
  },
  'CertificateData',
);

export const Health = t.type({ status: t.string }, 'Health');

export type DocumentResource = t.TypeOf<typeof DocumentResource>;
export type RecipientResource = t.TypeOf<typeof RecipientResource>;
export type FieldResource = t.TypeOf<typeof FieldResource>;
export type SignatureRequestResource = t.TypeOf<typeof SignatureRequestResource>;
export type ApiKeyResource = t.TypeOf<typeof ApiKeyResource>;
export type EmbeddedSessionResource = t.TypeOf<typeof EmbeddedSessionResource>;
export type EventResource = t.TypeOf<typeof EventResource>;
export type Problem = t.TypeOf<typeof Problem>;
export type SignerViewResource = t.TypeOf<typeof SignerViewResource>;
export type OtpSentResource = t.TypeOf<typeof OtpSentResource>;
export type CertificateDataResource = t.TypeOf<typeof CertificateDataResource>;
