import type { Esig } from '@esig/client';
import type { JsonSchema } from '@esig/http-express';
import { codecs, toJsonSchema } from '@esig/http-express';

/** What a tool returns when the API answered: structured data (with an outputSchema) or a PDF resource. */
export type ToolOutput = { readonly kind: 'json'; readonly data: Record<string, unknown> } | { readonly kind: 'pdf'; readonly uri: string; readonly bytes: Uint8Array };

export interface ToolAnnotations {
  readonly title: string;
  readonly readOnlyHint: boolean;
  readonly destructiveHint: boolean;
  readonly idempotentHint: boolean;
  readonly openWorldHint: boolean;
}

export interface EsigTool {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: JsonSchema;
  /** Absent for tools that return a PDF as a resource. */
  readonly outputSchema?: JsonSchema;
  readonly annotations: ToolAnnotations;
  readonly run: (esig: Esig, args: Record<string, unknown>) => Promise<ToolOutput>;
}

type Props = Record<string, JsonSchema>;

const idSchema = (codec: Parameters<typeof toJsonSchema>[0], what: string): JsonSchema => ({ ...toJsonSchema(codec), description: what });

const IDEMPOTENCY_KEY: Props = {
  idempotencyKey: {
    type: 'string',
    minLength: 1,
    maxLength: 255,
    // Printable ASCII, as the API's Idempotency-Key header takes it.
    pattern: '^[\\x20-\\x7e]+$',
    description: 'Optional. Send the same value again to retry this write safely: the API performs it at most once and replays the first answer.',
  },
};

/** An object schema: path parameters first, then the properties of a request codec (body or query). */
const input = (params: Props, codec?: Parameters<typeof toJsonSchema>[0], extra: Props = {}): JsonSchema => {
  const body = (codec ? toJsonSchema(codec) : { properties: {}, required: [] }) as { properties?: Props; required?: string[] };
  return {
    type: 'object',
    properties: { ...params, ...(body.properties ?? {}), ...extra },
    required: [...Object.keys(params), ...(body.required ?? [])],
    additionalProperties: false,
  };
};

const output = (codec: Parameters<typeof toJsonSchema>[0]): JsonSchema => toJsonSchema(codec);

const listOutput = (item: Parameters<typeof toJsonSchema>[0]): JsonSchema => ({
  type: 'object',
  properties: { data: { type: 'array', items: toJsonSchema(item) }, pageInfo: toJsonSchema(codecs.PageInfo) },
  required: ['data', 'pageInfo'],
});

const read = (title: string): ToolAnnotations => ({ title, readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
const write = (title: string, o: { destructive?: boolean; idempotent?: boolean; openWorld?: boolean } = {}): ToolAnnotations => ({
  title,
  readOnlyHint: false,
  destructiveHint: o.destructive ?? false,
  idempotentHint: o.idempotent ?? false,
  openWorldHint: o.openWorld ?? false,
});

const s = (v: unknown) => v as string;
const json = (data: unknown): ToolOutput => ({ kind: 'json', data: data as Record<string, unknown> });
/** A write's options: the caller's idempotency key (else the client makes one), and never a retry (a 429 goes back to the model). */
const opts = (a: Record<string, unknown>) => ({ maxRetries: 0, ...(typeof a.idempotencyKey === 'string' ? { idempotencyKey: a.idempotencyKey } : {}) });
const without = (a: Record<string, unknown>, ...keys: string[]) => Object.fromEntries(Object.entries(a).filter(([k]) => !keys.includes(k) && k !== 'idempotencyKey'));

/** The arguments that are the tool's own, never the API's: their constraints are checked before any API call. */
const TOOL_ONLY = new Set(['idempotencyKey', 'contentBase64']);
/** What bounds a value rather than shapes it (left to the API to check, as it checks a direct call's), and annotations. */
const NOT_CHECKED_HERE = new Set(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf', 'minLength', 'maxLength', 'pattern', 'format', 'enum', 'const', 'minItems', 'maxItems', 'uniqueItems', 'minProperties', 'maxProperties', 'propertyNames', 'default', 'description']);

const shapeOnly = (schema: JsonSchema): JsonSchema => {
  if (Array.isArray(schema)) return schema.map((s) => shapeOnly(s as JsonSchema)) as unknown as JsonSchema;
  if (schema === null || typeof schema !== 'object') return schema;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(schema as Record<string, unknown>)) {
    if (NOT_CHECKED_HERE.has(k)) continue;
    if (k === 'properties') out[k] = Object.fromEntries(Object.entries(v as Record<string, JsonSchema>).map(([name, p]) => [name, shapeOnly(p)]));
    else if (k === 'type') out[k] = v === 'integer' ? 'number' : v;
    else out[k] = typeof v === 'object' && v !== null ? shapeOnly(v as JsonSchema) : v;
  }
  // An enum that said the type alone: the type stays.
  const e = (schema as { enum?: unknown[]; type?: unknown }).enum;
  if (out.type === undefined && Array.isArray(e) && e.length > 0 && e.every((x) => typeof x === typeof e[0])) out.type = typeof e[0];
  return out as JsonSchema;
};

/**
 * An id, sent as one path segment: not empty, not `.` or `..` (which a URL would resolve), and well-formed Unicode (no
 * lone surrogate, on which the client's encodeURIComponent throws: an internal error for the caller's fault). The
 * pattern is compiled with the `u` flag (ajv's default), where a lone surrogate is a code point of category Cs.
 */
const ONE_SEGMENT: JsonSchema = { type: 'string', minLength: 1, pattern: '^\\P{Cs}*$', not: { enum: ['.', '..'] } };

/**
 * What a tool checks of its arguments before it calls the API: their shape (types, the arguments it has, those
 * required) and the constraints of its own arguments (`idempotencyKey`, a header; `contentBase64`, decoded here), but
 * not the API's bounds on values (a `limit` over 100, an id of the wrong form, a word not in an enum). Those the API
 * checks itself, after the caller's scope, and logs, as for a direct call (the spec: the same permission check and the
 * same log entries). An id must still name one path segment (not empty, not `.` or `..`, which a URL would resolve).
 * The advertised `inputSchema` keeps every bound: it tells the model what the API takes.
 */
export const argumentsSchema = (input: JsonSchema): JsonSchema => {
  const s = input as { properties?: Record<string, JsonSchema> };
  const properties = Object.fromEntries(
    Object.entries(s.properties ?? {}).map(([name, p]) => [
      name,
      TOOL_ONLY.has(name) ? p : /Id$/.test(name) && (p as { type?: unknown }).type === 'string' ? ONE_SEGMENT : shapeOnly(p),
    ]),
  );
  return { ...(input as object), properties } as JsonSchema;
};

const documentId = { documentId: idSchema(codecs.DocumentId, 'The document id (doc_…).') };
const requestId = { requestId: idSchema(codecs.RequestId, 'The signature request id (req_…).') };

/**
 * The tools. Each one is one call of the REST API through `@esig/client` with the caller's token: the same
 * validation, scope check, rate limit and log entry as a direct call. Input schemas come from the API's codecs.
 */
export const TOOLS: readonly EsigTool[] = [
  {
    name: 'list_documents',
    description:
      'Lists uploaded PDF documents, newest first, one page at a time. Use it to find a document id before creating a signature request. Returns { data: Document[], pageInfo: { hasMore, nextCursor } }; pass nextCursor as cursor for the next page.',
    inputSchema: input({}, codecs.DocumentListQuery),
    outputSchema: listOutput(codecs.DocumentResource),
    annotations: read('List documents'),
    run: async (esig, a) => json(await esig.documents.list(a as never, { maxRetries: 0 }).page()),
  },
  {
    name: 'get_document',
    description: "Gets one document's metadata (name, status, pageCount, sizeBytes, sha256, signatureRequestId). Use it to check a document before placing fields (page count) or to see which request it belongs to.",
    inputSchema: input(documentId),
    outputSchema: output(codecs.DocumentResource),
    annotations: read('Get a document'),
    run: async (esig, a) => json(await esig.documents.get(s(a.documentId) as never, { maxRetries: 0 })),
  },
  {
    name: 'upload_document',
    description:
      'Uploads a PDF to be signed, given as base64 in contentBase64 (at most the server’s upload limit decoded: 25 MiB unless its operator set another). Returns the new Document with its id (doc_…), status UPLOADED and pageCount. A corrupt, encrypted or empty PDF is refused with invalid_document.',
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 255, description: 'File name shown to signers, e.g. "NDA.pdf".' },
        contentBase64: { type: 'string', minLength: 1, description: 'The PDF file, base64-encoded.' },
        ...IDEMPOTENCY_KEY,
      },
      required: ['name', 'contentBase64'],
      additionalProperties: false,
    },
    outputSchema: output(codecs.DocumentResource),
    annotations: write('Upload a document'),
    run: async (esig, a) => json(await esig.documents.upload(Buffer.from(s(a.contentBase64), 'base64'), { name: s(a.name) }, opts(a))),
  },
  {
    name: 'list_signature_requests',
    description: 'Lists signature requests, newest first, optionally by status (DRAFT, SENT, COMPLETED, DECLINED, EXPIRED, CANCELLED). Returns { data: SignatureRequest[], pageInfo }.',
    inputSchema: input({}, codecs.RequestListQuery),
    outputSchema: listOutput(codecs.SignatureRequestResource),
    annotations: read('List signature requests'),
    run: async (esig, a) => json(await esig.signatureRequests.list(a as never, { maxRetries: 0 }).page()),
  },
  {
    name: 'get_signature_request',
    description: "Gets a signature request with its recipients (and each one's status), fields and documents. Use it to follow progress after sending.",
    inputSchema: input(requestId),
    outputSchema: output(codecs.SignatureRequestResource),
    annotations: read('Get a signature request'),
    run: async (esig, a) => json(await esig.signatureRequests.get(s(a.requestId) as never, { maxRetries: 0 })),
  },
  {
    name: 'create_signature_request',
    description:
      'Creates a signature request in DRAFT for uploaded documents (documentIds). Next: add_recipient for each signer, add_field to place signature fields, then send_signature_request. Returns the SignatureRequest with its id (req_…).',
    inputSchema: input({}, codecs.CreateSignatureRequestBody, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.SignatureRequestResource),
    annotations: write('Create a signature request'),
    run: async (esig, a) => json(await esig.signatureRequests.create(without(a) as never, opts(a))),
  },
  {
    name: 'add_recipient',
    description: 'Adds a recipient (a signer, or cc) to a DRAFT signature request. Returns the new Recipient with its id (rcp_…), needed by add_field.',
    inputSchema: input(requestId, codecs.AddRecipientBody, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.RecipientResource),
    annotations: write('Add a recipient'),
    run: async (esig, a) => json(await esig.signatureRequests.addRecipient(s(a.requestId) as never, without(a, 'requestId') as never, opts(a))),
  },
  {
    name: 'add_field',
    description:
      "Places a field (signature, initials, date_signed, text, checkbox, name, email) for a signer on a document page of a DRAFT request. Coordinates are PDF points from the page's top-left corner. Returns the new Field.",
    inputSchema: input(requestId, codecs.AddFieldBody, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.FieldResource),
    annotations: write('Add a field'),
    run: async (esig, a) => json(await esig.signatureRequests.addField(s(a.requestId) as never, without(a, 'requestId') as never, opts(a))),
  },
  {
    name: 'send_signature_request',
    description: 'Sends a DRAFT signature request: signers are emailed their signing links (in test mode, to the test mailbox only). It cannot be undone, only cancelled. Returns the SignatureRequest, now SENT.',
    inputSchema: input(requestId, undefined, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.SignatureRequestResource),
    annotations: write('Send a signature request', { openWorld: true }),
    run: async (esig, a) => json(await esig.signatureRequests.send(s(a.requestId) as never, opts(a))),
  },
  {
    name: 'cancel_signature_request',
    description: 'Cancels a DRAFT or SENT signature request for good: signing links stop working. Once every signer has signed it cannot be cancelled (invalid_state). Returns the SignatureRequest, now CANCELLED.',
    inputSchema: input(requestId, undefined, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.SignatureRequestResource),
    annotations: write('Cancel a signature request', { destructive: true, idempotent: true }),
    run: async (esig, a) => json(await esig.signatureRequests.cancel(s(a.requestId) as never, opts(a))),
  },
  {
    name: 'remind_signers',
    description: 'Emails the signers of a SENT request who have not signed yet a reminder with their link; invalid_state once every signer has signed. Returns the SignatureRequest.',
    inputSchema: input(requestId, undefined, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.SignatureRequestResource),
    annotations: write('Remind signers', { openWorld: true }),
    run: async (esig, a) => json(await esig.signatureRequests.remind(s(a.requestId) as never, opts(a))),
  },
  {
    name: 'create_embedded_session',
    description:
      "Creates a one-time embedded signing session for a signer of a SENT request whose turn it is, bound to the web origin (https://host[:port], no path) of the product that will show it in an iframe. Returns the session with its url (single use, expires unused after a few minutes): hand it to that product's page, which mounts it with @esig/embed. Use get_signature_request afterwards to confirm the signature server-side.",
    inputSchema: input({ ...requestId, recipientId: idSchema(codecs.RecipientId, 'The signer’s recipient id (rcp_…).') }, codecs.CreateEmbeddedSessionBody, IDEMPOTENCY_KEY),
    outputSchema: output(codecs.EmbeddedSessionResource),
    annotations: write('Create an embedded signing session'),
    run: async (esig, a) => json(await esig.signatureRequests.createEmbeddedSession(s(a.requestId) as never, s(a.recipientId) as never, without(a, 'requestId', 'recipientId') as never, opts(a))),
  },
  {
    name: 'get_finished_document',
    description: 'Gets the signed PDF of a COMPLETED signature request, as an embedded PDF resource. Before completion the API answers invalid_state.',
    inputSchema: input(requestId),
    annotations: read('Get the signed PDF'),
    run: async (esig, a) => ({
      kind: 'pdf',
      uri: `esig://signature-requests/${s(a.requestId)}/document`,
      bytes: await esig.signatureRequests.finishedDocument(s(a.requestId) as never, { maxRetries: 0 }),
    }),
  },
  {
    name: 'get_certificate',
    description: 'Gets the evidence certificate data of a finished signature request as JSON: who signed what, when, from where, and the document hashes.',
    inputSchema: input(requestId),
    outputSchema: output(codecs.CertificateDataResource),
    annotations: read('Get the evidence certificate'),
    run: async (esig, a) => json(await esig.signatureRequests.certificate(s(a.requestId) as never, { maxRetries: 0 })),
  },
  {
    name: 'list_events',
    description: 'Lists the event log (request.sent, recipient.signed, request.completed, …), newest first, optionally by type. Use it to see what happened recently. Returns { data: Event[], pageInfo }.',
    inputSchema: input({}, codecs.EventListQuery),
    outputSchema: listOutput(codecs.EventResource),
    annotations: read('List events'),
    run: async (esig, a) => json(await esig.events.list(a as never, { maxRetries: 0 }).page()),
  },
  {
    name: 'list_webhook_endpoints',
    description: 'Lists the webhook endpoints of the organization (URL, subscribed events, enabled). Secrets are never shown. Returns { data: WebhookEndpoint[], pageInfo }.',
    inputSchema: input({}, codecs.ListQuery),
    outputSchema: listOutput(codecs.WebhookEndpointResource),
    annotations: read('List webhook endpoints'),
    run: async (esig, a) => json(await esig.webhooks.endpoints.list(a as never, { maxRetries: 0 }).page()),
  },
  {
    name: 'list_webhook_deliveries',
    description: 'Lists webhook deliveries and their outcome, optionally for one endpoint or event. Use it to diagnose a receiver that misses events. Returns { data: WebhookDelivery[], pageInfo }.',
    inputSchema: input({}, codecs.DeliveryListQuery),
    outputSchema: listOutput(codecs.WebhookDeliveryResource),
    annotations: read('List webhook deliveries'),
    run: async (esig, a) => json(await esig.webhooks.deliveries.list(a as never, { maxRetries: 0 }).page()),
  },
];
