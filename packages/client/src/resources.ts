import type { CertificateData, OperationId, Operations } from './generated/api-types.js';
import { OPERATIONS } from './generated/api-types.js';
import type { Page } from './pagination.js';
import { PagedList } from './pagination.js';
import type { Call, RequestOptions, Transport } from './transport.js';
import type {
  ApiKeyCreateParams,
  ApiKeyId,
  ApiKeyListParams,
  DocumentId,
  DocumentListParams,
  DocumentUploadParams,
  EmbeddedSessionCreateParams,
  EventListParams,
  FieldCreateParams,
  LogListParams,
  RecipientId,
  RecipientCreateParams,
  SignatureRequestCreateParams,
  SignatureRequestId,
  SignatureRequestListParams,
  TestMailboxListParams,
  WebhookDeliveryId,
  WebhookDeliveryListParams,
  WebhookEndpointCreateParams,
  WebhookEndpointId,
  WebhookEndpointListParams,
  WebhookEndpointUpdateParams,
} from './types.js';

type Response<O extends OperationId> = Operations[O]['response'];
type ListItemOf<O extends OperationId> = Response<O> extends { data: Array<infer T> } ? T : never;

/** The call of an operation from the generated table: its method, its path with the parameters filled in. */
const callOf = <O extends OperationId>(op: O, params: Operations[O]['params'], extra: Omit<Call, 'method' | 'path'> = {}): Call => {
  const { method, path } = OPERATIONS[op];
  const values = params as Record<string, string>;
  return {
    method,
    path: path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const v = values[name];
      if (typeof v !== 'string' || v === '') throw new TypeError(`${op}: ${name} must be a non-empty string`);
      return encodeURIComponent(v);
    }),
    ...extra,
  };
};

/** Shared plumbing of the resource classes. */
abstract class Resource {
  constructor(protected readonly transport: Transport) {}

  protected async call<O extends OperationId, T = Response<O>>(op: O, params: Operations[O]['params'], extra: Omit<Call, 'method' | 'path'>, options?: RequestOptions): Promise<T> {
    return (await this.transport.request<T>(callOf(op, params, extra), options)).data;
  }

  protected paged<O extends OperationId>(op: O, params: Operations[O]['params'], query: Readonly<Record<string, string | number | boolean | undefined>> | undefined, options?: RequestOptions): PagedList<ListItemOf<O>> {
    const { cursor, ...rest } = query ?? {};
    return new PagedList<ListItemOf<O>>(
      (c) => this.call<O, Page<ListItemOf<O>>>(op, params, { query: { ...rest, cursor: c } }, options),
      typeof cursor === 'string' ? cursor : undefined,
    );
  }
}

const toBytes = async (file: Uint8Array | ArrayBuffer | Blob): Promise<Uint8Array> =>
  file instanceof Uint8Array ? file : file instanceof ArrayBuffer ? new Uint8Array(file) : new Uint8Array(await file.arrayBuffer());

/** Uploaded PDFs. */
export class Documents extends Resource {
  /**
   * Uploads a PDF (at most 25 MiB by default; a corrupt, encrypted or empty one is `invalid_document`).
   *
   * @example
   * const doc = await esig.documents.upload(await readFile('contract.pdf'), { name: 'contract.pdf' });
   */
  async upload(file: Uint8Array | ArrayBuffer | Blob, params: DocumentUploadParams, options?: RequestOptions) {
    // Bytes, not a stream, so that a retry can send the same body again.
    const data = await toBytes(file);
    return this.call('uploadDocument', {}, { query: { name: params.name }, bytes: { data, contentType: 'application/pdf' } }, options);
  }

  get(id: DocumentId, options?: RequestOptions) {
    return this.call('getDocument', { documentId: id }, {}, options);
  }

  /** The PDF exactly as uploaded. */
  content(id: DocumentId, options?: RequestOptions): Promise<Uint8Array> {
    return this.call('getDocumentContent', { documentId: id }, { accept: 'bytes' }, options);
  }

  /** Every document (newest first by default), page by page; `.page()` for one page. */
  list(params?: DocumentListParams, options?: RequestOptions) {
    return this.paged('listDocuments', {}, params, options);
  }
}

/** Signature requests: draft, recipients, fields, send, track, results. */
export class SignatureRequests extends Resource {
  /** A DRAFT request over uploaded documents. */
  create(params: SignatureRequestCreateParams, options?: RequestOptions) {
    return this.call('createSignatureRequest', {}, { body: params }, options);
  }

  get(id: SignatureRequestId, options?: RequestOptions) {
    return this.call('getSignatureRequest', { requestId: id }, {}, options);
  }

  /** Every request (newest first by default, optionally by `status`), page by page; `.page()` for one page. */
  list(params?: SignatureRequestListParams, options?: RequestOptions) {
    return this.paged('listSignatureRequests', {}, params, options);
  }

  /** Adds a recipient (a `signer` unless `role: 'cc'`) to a DRAFT request. */
  addRecipient(id: SignatureRequestId, params: RecipientCreateParams, options?: RequestOptions) {
    return this.call('addRecipient', { requestId: id }, { body: params }, options);
  }

  /** Places a field for a signer: `page` is 1-based, `x`, `y`, `width`, `height` in PDF points from the page's top-left. */
  addField(id: SignatureRequestId, params: FieldCreateParams, options?: RequestOptions) {
    return this.call('addField', { requestId: id }, { body: params }, options);
  }

  /** Sends the request: it leaves DRAFT and the invitations go out (once, however often the call is retried). */
  send(id: SignatureRequestId, options?: RequestOptions) {
    return this.call('sendSignatureRequest', { requestId: id }, {}, options);
  }

  /** Cancels a DRAFT or SENT request. */
  cancel(id: SignatureRequestId, options?: RequestOptions) {
    return this.call('cancelSignatureRequest', { requestId: id }, {}, options);
  }

  /** Re-notifies the signers whose turn it is and who have not signed. */
  remind(id: SignatureRequestId, options?: RequestOptions) {
    return this.call('remindSignatureRequest', { requestId: id }, {}, options);
  }

  /**
   * A one-time session to sign inside your own web page: its `url` may be framed by `origin` only (a
   * serialized origin such as `https://app.example.com`), is consumed on first load and expires unused after
   * a few minutes. The request must be SENT and the recipient a signer whose turn it is.
   */
  createEmbeddedSession(id: SignatureRequestId, recipientId: RecipientId, params: EmbeddedSessionCreateParams, options?: RequestOptions) {
    return this.call('createEmbeddedSession', { requestId: id, recipientId }, { body: params }, options);
  }

  /** The finished PDF; `EsigInvalidStateError` until the request is COMPLETED (a COMPLETED request always has it). */
  finishedDocument(id: SignatureRequestId, options?: RequestOptions): Promise<Uint8Array> {
    return this.call('getFinishedDocument', { requestId: id }, { accept: 'bytes' }, options);
  }

  /** The evidence certificate's data; `EsigInvalidStateError` until the request is COMPLETED (a COMPLETED request always has it). */
  certificate(id: SignatureRequestId, options?: RequestOptions): Promise<CertificateData> {
    return this.call<'getCertificate', CertificateData>('getCertificate', { requestId: id }, { acceptType: 'application/json' }, options);
  }

  /** The evidence certificate as a PDF. */
  certificatePdf(id: SignatureRequestId, options?: RequestOptions): Promise<Uint8Array> {
    return this.call('getCertificate', { requestId: id }, { accept: 'bytes' }, options);
  }
}

/** Webhook endpoints: where esig delivers signed events. */
export class WebhookEndpoints extends Resource {
  /** An HTTPS endpoint subscribed to event types; its `secret` (`whsec_…`) is in this answer only. */
  create(params: WebhookEndpointCreateParams, options?: RequestOptions) {
    return this.call('createWebhookEndpoint', {}, { body: params }, options);
  }

  list(params?: WebhookEndpointListParams, options?: RequestOptions) {
    return this.paged('listWebhookEndpoints', {}, params, options);
  }

  get(id: WebhookEndpointId, options?: RequestOptions) {
    return this.call('getWebhookEndpoint', { endpointId: id }, {}, options);
  }

  /** Changes `url`, `events`, `description` or `enabled` (enabling clears the failure record). */
  update(id: WebhookEndpointId, params: WebhookEndpointUpdateParams, options?: RequestOptions) {
    return this.call('updateWebhookEndpoint', { endpointId: id }, { body: params }, options);
  }

  /** Deletes the endpoint; its waiting deliveries are cancelled. */
  delete(id: WebhookEndpointId, options?: RequestOptions) {
    return this.call('deleteWebhookEndpoint', { endpointId: id }, {}, options);
  }

  /** A new secret, shown once; the old one keeps signing for 24 h (two `v1` signatures per delivery meanwhile). */
  rotateSecret(id: WebhookEndpointId, options?: RequestOptions) {
    return this.call('rotateWebhookSecret', { endpointId: id }, {}, options);
  }

  /** Sends a signed `webhook.test` event to the endpoint now. */
  test(id: WebhookEndpointId, options?: RequestOptions) {
    return this.call('testWebhookEndpoint', { endpointId: id }, {}, options);
  }
}

/** The delivery log. */
export class WebhookDeliveries extends Resource {
  /** One entry per attempt: status, duration, the first 1,024 bytes of the answer. */
  list(params?: WebhookDeliveryListParams, options?: RequestOptions) {
    return this.paged('listWebhookDeliveries', {}, params, options);
  }

  /** Delivers the delivery's event again: a new event id, `redelivery_of` the original. */
  resend(id: WebhookDeliveryId, options?: RequestOptions) {
    return this.call('resendWebhookDelivery', { deliveryId: id }, {}, options);
  }
}

/** The event log, to reconcile by polling. */
export class Events extends Resource {
  list(params?: EventListParams, options?: RequestOptions) {
    return this.paged('listEvents', {}, params, options);
  }
}

/** API keys of the caller's organization and mode. */
export class ApiKeys extends Resource {
  /** A key with at most the caller's scopes, in the caller's mode; its `secret` is in this answer only. */
  create(params: ApiKeyCreateParams, options?: RequestOptions) {
    return this.call('createApiKey', {}, { body: params }, options);
  }

  list(params?: ApiKeyListParams, options?: RequestOptions) {
    return this.paged('listApiKeys', {}, params, options);
  }

  /** Revokes the key at once. */
  revoke(id: ApiKeyId, options?: RequestOptions) {
    return this.call('revokeApiKey', { keyId: id }, {}, options);
  }
}

/** The request log: API calls and webhook calls of this organization and mode. */
export class Logs extends Resource {
  list(params?: LogListParams, options?: RequestOptions) {
    return this.paged('listLogs', {}, params, options);
  }
}

/** Test mode only: the mail kept instead of sent (invitations with their signing links, codes, notices). */
export class TestMailbox extends Resource {
  list(params?: TestMailboxListParams, options?: RequestOptions) {
    return this.paged('listTestMailbox', {}, params, options);
  }
}
