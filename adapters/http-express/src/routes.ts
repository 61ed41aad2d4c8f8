import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as core from '@esig/core';
import { validationFailed } from '@esig/core';
import * as c from './codecs.js';
import type { EsigHttpDeps, EsigHttpOptions } from './deps.js';
import { presentApiKey, presentEmbeddedSession, presentAttempt, presentCertificateData, presentDelivery, presentDocument, presentEndpoint, presentEvent, presentField, presentLogEntry, presentRecipient, presentSignatureRequest } from './presenters.js';
import type { Route } from './route.js';
import { json, op, pdf, read, write } from './route.js';

const listDesc = (what: string) => `A list envelope of ${what}: exactly \`data\` and \`pageInfo\`.`;

/**
 * Every route of the public API, in one table: the Express router and the OpenAPI document are both
 * generated from it, so neither can list a route the other lacks.
 */
export const buildRoutes = (d: EsigHttpDeps, opts: Pick<EsigHttpOptions, 'publicUrl' | 'embedSessionTtlS'>): readonly Route[] => [
  // ---- Documents ---------------------------------------------------------------------------------
  write({
    method: 'post', path: '/api/v1/documents', operationId: 'uploadDocument', tag: 'Documents', scope: 'documents:write',
    replayInClear: true,
    // A client that retries an upload (the reason for its key) is answered before the file is inspected again.
    lookUpKeyFirst: true,
    summary: 'Upload a PDF: raw `application/pdf` with `?name=`, or `multipart/form-data` with `file` and `name`.',
    query: c.UploadQuery, body: 'pdf',
    response: { status: 201, codec: c.DocumentResource, description: 'The stored document.' },
    errors: {
      invalid_document: 'the file is not a readable PDF (corrupt, encrypted, no pages)',
      server_busy: 'the server holds as many uploads as it can (refused before the body is read), or this one waited too long for a PDF thread; nothing was stored: send it again after `Retry-After` seconds',
    },
    handle: ({ principal, upload, query }) =>
      pipe(
        TE.fromNullable(validationFailed([{ path: 'file', message: 'is required' }]))(upload),
        TE.chainW((u) => {
          const name = u.name ?? query.name;
          return name === undefined || name.trim() === ''
            ? TE.left(validationFailed([{ path: 'name', message: 'is required' }], 'name is required.'))
            : pipe(
                core.inspectUpload(d)(principal, u.bytes),
                // Written ahead of the command's transaction, which then only names them: a large PDF never
                // holds the writer, or on SQLite the event loop, in one piece.
                TE.chainW((inspected) => core.stageUpload(d)(principal, inspected)),
                TE.map((pdf) => ({ pdf, name })),
              );
        }),
        TE.map(({ pdf, name }) => op(core.uploadDocument(d)(principal, { name, pdf }), 201, presentDocument, core.releaseUpload(d)(principal, pdf))),
      ),
  }),
  read({
    method: 'get', path: '/api/v1/documents', operationId: 'listDocuments', tag: 'Documents', scope: 'documents:read',
    summary: 'List documents, newest first by default.', query: c.DocumentListQuery,
    response: { status: 200, codec: c.listOf(c.DocumentResource), description: listDesc('documents') },
    handle: ({ principal, query }) =>
      pipe(core.listDocuments(d)(principal, query, { status: query.status }, presentDocument), TE.map(json(200))),
  }),
  read({
    method: 'get', path: '/api/v1/documents/{documentId}', operationId: 'getDocument', tag: 'Documents', scope: 'documents:read',
    summary: 'A document’s metadata.', params: { documentId: c.DocumentId },
    response: { status: 200, codec: c.DocumentResource, description: 'The document.' },
    handle: ({ principal, params }) => pipe(core.getDocument(d)(principal, params.documentId), TE.map((x) => json(200)(presentDocument(x)))),
  }),
  read({
    method: 'get', path: '/api/v1/documents/{documentId}/content', operationId: 'getDocumentContent', tag: 'Documents', scope: 'documents:read',
    summary: 'The uploaded PDF.', params: { documentId: c.DocumentId },
    response: { status: 200, contentType: 'application/pdf', description: 'The PDF exactly as uploaded.' },
    handle: ({ principal, params }) =>
      pipe(
        core.getDocumentContent(d)(principal, params.documentId),
        TE.map(({ document, bytes }) => pdf(bytes, document.name)),
      ),
  }),

  // ---- Signature requests ------------------------------------------------------------------------
  write({
    method: 'post', path: '/api/v1/signature-requests', operationId: 'createSignatureRequest', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Create a DRAFT signature request over uploaded documents (at most ESIG_MAX_PAGES_PER_REQUEST pages together, 1,000 by default).', body: c.CreateSignatureRequestBody,
    response: { status: 201, codec: c.SignatureRequestResource, description: 'The created request, including its id.' },
    handle: ({ principal, body }) => TE.right(op(core.createSignatureRequest(d)(principal, body), 201, presentSignatureRequest)),
  }),
  read({
    method: 'get', path: '/api/v1/signature-requests', operationId: 'listSignatureRequests', tag: 'Signature requests', scope: 'signature_requests:read',
    summary: 'List signature requests, optionally by status.', query: c.RequestListQuery,
    response: { status: 200, codec: c.listOf(c.SignatureRequestResource), description: listDesc('signature requests') },
    handle: ({ principal, query }) =>
      pipe(core.listSignatureRequests(d)(principal, query, { status: query.status }, presentSignatureRequest), TE.map(json(200))),
  }),
  read({
    method: 'get', path: '/api/v1/signature-requests/{requestId}', operationId: 'getSignatureRequest', tag: 'Signature requests', scope: 'signature_requests:read',
    summary: 'A request’s status, recipients and fields.', params: { requestId: c.RequestId },
    response: { status: 200, codec: c.SignatureRequestResource, description: 'The request.' },
    handle: ({ principal, params }) =>
      pipe(core.getSignatureRequest(d)(principal, params.requestId), TE.map((x) => json(200)(presentSignatureRequest(x)))),
  }),
  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/recipients', operationId: 'addRecipient', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Add a recipient (signer by default) to a DRAFT request.', params: { requestId: c.RequestId }, body: c.AddRecipientBody,
    response: { status: 201, codec: c.RecipientResource, description: 'The added recipient.' },
    handle: ({ principal, params, body }) => TE.right(op(core.addRecipient(d)(principal, params.requestId, body), 201, presentRecipient)),
  }),
  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/fields', operationId: 'addField', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Place a field for a signer on a page (PDF points, origin top-left of the page as displayed); the box must lie inside the page; only in DRAFT.', params: { requestId: c.RequestId }, body: c.AddFieldBody,
    response: { status: 201, codec: c.FieldResource, description: 'The placed field.' },
    handle: ({ principal, params, body }) => TE.right(op(core.addField(d)(principal, params.requestId, body), 201, presentField)),
  }),
  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/send', operationId: 'sendSignatureRequest', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Send the request: it leaves DRAFT and the invitations go out.', params: { requestId: c.RequestId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.SignatureRequestResource, description: 'The request after sending.' },
    handle: ({ principal, params }) => TE.right(op(core.sendSignatureRequest(d)(principal, params.requestId), 200, presentSignatureRequest)),
  }),
  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/cancel', operationId: 'cancelSignatureRequest', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Cancel a DRAFT or SENT request.', params: { requestId: c.RequestId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.SignatureRequestResource, description: 'The cancelled request.' },
    handle: ({ principal, params }) => TE.right(op(core.cancelSignatureRequest(d)(principal, params.requestId), 200, presentSignatureRequest)),
  }),

  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/remind', operationId: 'remindSignatureRequest', tag: 'Signature requests', scope: 'signature_requests:write',
    replayInClear: true,
    summary: 'Re-notify the signers whose turn it is and who have not signed.', params: { requestId: c.RequestId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.SignatureRequestResource, description: 'The request; reminders are on their way.' },
    handle: ({ principal, params }) => TE.right(op(core.remindSignatureRequest(d)(principal, params.requestId), 200, presentSignatureRequest)),
  }),
  write({
    method: 'post', path: '/api/v1/signature-requests/{requestId}/recipients/{recipientId}/embedded-sessions', operationId: 'createEmbeddedSession', tag: 'Signature requests', scope: 'signature_requests:write',
    summary: 'Create a one-time session to sign inside your own web page: `url` may be framed by `origin` only, consumed on first load, unused it expires after ESIG_EMBED_SESSION_TTL_S (300 s by default). The request must be SENT and the recipient a signer whose turn it is.',
    params: { requestId: c.RequestId, recipientId: c.RecipientId }, body: c.CreateEmbeddedSessionBody,
    response: { status: 201, codec: c.EmbeddedSessionResource, description: 'The session; `url` is shown once (only its hash is kept).' },
    handle: ({ principal, params, body }) =>
      TE.right(
        op(core.createEmbeddedSession({ ...d, embedSessionTtlS: opts.embedSessionTtlS })(principal, params.requestId, params.recipientId, body), 201, (x) =>
          presentEmbeddedSession(x, opts.publicUrl),
        ),
      ),
  }),
  read({
    method: 'get', path: '/api/v1/signature-requests/{requestId}/document', operationId: 'getFinishedDocument', tag: 'Signature requests', scope: 'signature_requests:read',
    summary: 'The finished PDF: every document in order with the values and signatures stamped. 409 before the request is COMPLETED; a COMPLETED request always has it.', params: { requestId: c.RequestId },
    response: { status: 200, contentType: 'application/pdf', description: 'The finished PDF.' },
    errors: { invalid_state: 'the request is not COMPLETED yet (after the last signature it becomes COMPLETED once this document exists)' },
    handle: ({ principal, params }) =>
      pipe(
        core.getFinishedDocument(d)(principal, params.requestId),
        TE.map(({ request, bytes }) => pdf(bytes, `${request.title}.pdf`)),
      ),
  }),
  read({
    method: 'get', path: '/api/v1/signature-requests/{requestId}/certificate', operationId: 'getCertificate', tag: 'Signature requests', scope: 'signature_requests:read',
    summary: 'The evidence certificate as a PDF; with `Accept: application/json`, its data. 409 before the request is COMPLETED; a COMPLETED request always has it.', params: { requestId: c.RequestId },
    response: { status: 200, contentType: 'application/pdf', json: c.CertificateDataResource, description: 'The certificate PDF, or its data with `Accept: application/json`.' },
    errors: { invalid_state: 'the request is not COMPLETED yet (after the last signature it becomes COMPLETED once the certificate exists)' },
    handle: ({ principal, params, accept }) =>
      accept !== undefined && /application\/json/.test(accept) && !/application\/pdf/.test(accept)
        ? pipe(core.getCertificateData(d)(principal, params.requestId), TE.map((x) => json(200)(presentCertificateData(x))))
        : pipe(
            core.getCertificatePdf(d)(principal, params.requestId),
            TE.map(({ request, bytes }) => pdf(bytes, `${request.certificateId}.pdf`)),
          ),
  }),

  // ---- Test mailbox --------------------------------------------------------------------------------
  read({
    method: 'get', path: '/api/v1/test-mailbox', operationId: 'listTestMailbox', tag: 'Test mode', scope: 'signature_requests:read',
    summary: 'Mail that test mode kept instead of sending (test keys only; without ESIG_TEST_SMTP_URL).', query: c.MailboxListQuery,
    response: { status: 200, codec: c.listOf(c.StoredMailResource), description: listDesc('kept test mail') },
    errors: { not_found: 'a live key: live mode has no test mailbox' },
    handle: ({ principal, query }) =>
      pipe(
        core.listTestMailbox(d)(principal, query, { to: query.to }, (m) => ({ id: m.id, to: m.to, subject: m.subject, text: m.text, html: m.html, messageId: m.messageId, createdAt: m.createdAt })),
        TE.map(json(200)),
      ),
  }),

  // ---- Webhooks ----------------------------------------------------------------------------------
  write({
    method: 'post', path: '/api/v1/webhooks/endpoints', operationId: 'createWebhookEndpoint', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'Create an endpoint (HTTPS, public address) subscribed to event types. The secret is in this response only.', body: c.CreateWebhookEndpointBody,
    response: { status: 201, codec: c.CreatedWebhookEndpointResource, description: 'The endpoint and its signing secret (shown once).' },
    handle: ({ principal, body }) =>
      pipe(
        core.createWebhookEndpoint(d)(principal, body),
        TE.map((cmd) => op(cmd, 201, (r: core.CreatedEndpoint) => ({ ...presentEndpoint(r.endpoint), secret: r.secret }))),
      ),
  }),
  read({
    method: 'get', path: '/api/v1/webhooks/endpoints', operationId: 'listWebhookEndpoints', tag: 'Webhooks', scope: 'webhooks:read',
    summary: 'List endpoints (never their secrets).', query: c.ListQuery,
    response: { status: 200, codec: c.listOf(c.WebhookEndpointResource), description: listDesc('webhook endpoints') },
    handle: ({ principal, query }) => pipe(core.listWebhookEndpoints(d)(principal, query, presentEndpoint), TE.map(json(200))),
  }),
  read({
    method: 'get', path: '/api/v1/webhooks/endpoints/{endpointId}', operationId: 'getWebhookEndpoint', tag: 'Webhooks', scope: 'webhooks:read',
    summary: 'One endpoint, with why it was disabled if it is.', params: { endpointId: c.EndpointId },
    response: { status: 200, codec: c.WebhookEndpointResource, description: 'The endpoint.' },
    handle: ({ principal, params }) => pipe(core.getWebhookEndpoint(d)(principal, params.endpointId), TE.map((e) => json(200)(presentEndpoint(e)))),
  }),
  write({
    method: 'patch', path: '/api/v1/webhooks/endpoints/{endpointId}', operationId: 'updateWebhookEndpoint', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'Change url, events, description, or enabled (enabling clears the failure record).', params: { endpointId: c.EndpointId }, body: c.UpdateWebhookEndpointBody,
    response: { status: 200, codec: c.WebhookEndpointResource, description: 'The updated endpoint.' },
    handle: ({ principal, params, body }) => pipe(core.updateWebhookEndpoint(d)(principal, params.endpointId, body), TE.map((cmd) => op(cmd, 200, presentEndpoint))),
  }),
  write({
    method: 'delete', path: '/api/v1/webhooks/endpoints/{endpointId}', operationId: 'deleteWebhookEndpoint', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'Delete an endpoint; its waiting deliveries are cancelled.', params: { endpointId: c.EndpointId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.WebhookEndpointResource, description: 'The deleted endpoint.' },
    handle: ({ principal, params }) => TE.right(op(core.deleteWebhookEndpoint(d)(principal, params.endpointId), 200, presentEndpoint)),
  }),
  write({
    method: 'post', path: '/api/v1/webhooks/endpoints/{endpointId}/rotate-secret', operationId: 'rotateWebhookSecret', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'A new secret (shown once); the old one keeps signing for 24 h, both v1 signatures on each delivery meanwhile.', params: { endpointId: c.EndpointId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.RotatedSecretResource, description: 'The new secret.' },
    handle: ({ principal, params }) =>
      TE.right(
        op(core.rotateWebhookSecret(d)(principal, params.endpointId), 200, (r: core.CreatedEndpoint) => ({ id: r.endpoint.id, secret: r.secret, previousSecretExpiresAt: r.endpoint.secrets[1]?.retiresAt ?? null })),
      ),
  }),
  write({
    method: 'post', path: '/api/v1/webhooks/endpoints/{endpointId}/test', operationId: 'testWebhookEndpoint', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'Send a signed `webhook.test` event to the endpoint now.', params: { endpointId: c.EndpointId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 202, codec: c.WebhookDeliveryResource, description: 'The test delivery, on its way. Its outcome does not count toward the endpoint’s health.' },
    errors: { invalid_state: 'the endpoint is disabled: enable it first' },
    handle: ({ principal, params }) => TE.right(op(core.testWebhookEndpoint(d)(principal, params.endpointId), 202, presentDelivery)),
  }),
  read({
    method: 'get', path: '/api/v1/webhooks/deliveries', operationId: 'listWebhookDeliveries', tag: 'Webhooks', scope: 'webhooks:read',
    summary: 'The delivery log: one entry per attempt (status, duration, first 1,024 bytes of the answer).', query: c.DeliveryListQuery,
    response: { status: 200, codec: c.listOf(c.DeliveryAttemptResource), description: listDesc('delivery attempts') },
    handle: ({ principal, query }) =>
      pipe(core.listWebhookDeliveries(d)(principal, query, { endpointId: query.endpointId, eventId: query.eventId }, presentAttempt), TE.map(json(200))),
  }),
  write({
    method: 'post', path: '/api/v1/webhooks/deliveries/{deliveryId}/resend', operationId: 'resendWebhookDelivery', tag: 'Webhooks', scope: 'webhooks:write',
    summary: 'Resend a delivery’s event: a new event id, `redelivery_of` the original, in a new delivery. The id may be a delivery’s or a delivery log entry’s (`id` or `deliveryId` of an entry).', params: { deliveryId: c.DeliveryId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 202, codec: c.WebhookDeliveryResource, description: 'The new delivery.' },
    errors: { invalid_state: 'the endpoint is disabled: enable it first' },
    handle: ({ principal, params }) => TE.right(op(core.resendWebhookDelivery(d)(principal, params.deliveryId), 202, presentDelivery)),
  }),
  read({
    method: 'get', path: '/api/v1/logs', operationId: 'listLogs', tag: 'Logs', scope: 'logs:read',
    summary: 'The request log: API calls and webhook calls of this org and mode.', query: c.LogListQuery,
    response: { status: 200, codec: c.listOf(c.ApiLogResource), description: listDesc('log entries') },
    handle: ({ principal, query }) => pipe(core.listApiLog(d)(principal, query, { kind: query.kind }, presentLogEntry), TE.map(json(200))),
  }),

  // ---- Events ------------------------------------------------------------------------------------
  read({
    method: 'get', path: '/api/v1/events', operationId: 'listEvents', tag: 'Events', scope: 'signature_requests:read',
    summary: 'The event log, to reconcile by polling.', query: c.EventListQuery,
    response: { status: 200, codec: c.listOf(c.EventResource), description: listDesc('events') },
    handle: ({ principal, query }) => pipe(core.listEvents(d)(principal, query, { type: query.type }, presentEvent), TE.map(json(200))),
  }),

  // ---- API keys ----------------------------------------------------------------------------------
  write({
    method: 'post', path: '/api/v1/api-keys', operationId: 'createApiKey', tag: 'API keys', scope: 'api_keys:write',
    summary: 'Create a key in the caller’s mode with at most the caller’s scopes. The secret is shown once.', body: c.CreateApiKeyBody,
    response: { status: 201, codec: c.CreatedApiKeyResource, description: 'The key record and its secret (only in this response).' },
    handle: ({ principal, body }) =>
      TE.right(op(core.createApiKey(d)(principal, body), 201, (k: core.IssuedKey) => ({ ...presentApiKey(k.key), secret: k.secret }))),
  }),
  read({
    method: 'get', path: '/api/v1/api-keys', operationId: 'listApiKeys', tag: 'API keys', scope: 'api_keys:write',
    summary: 'List keys (never their secrets).', query: c.ListQuery,
    response: { status: 200, codec: c.listOf(c.ApiKeyResource), description: listDesc('API keys') },
    handle: ({ principal, query }) => pipe(core.listApiKeys(d)(principal, query, presentApiKey), TE.map(json(200))),
  }),
  write({
    method: 'delete', path: '/api/v1/api-keys/{keyId}', operationId: 'revokeApiKey', tag: 'API keys', scope: 'api_keys:write',
    summary: 'Revoke a key at once.', params: { keyId: c.KeyId }, body: c.EmptyBody, emptyBodyAllowed: true,
    response: { status: 200, codec: c.ApiKeyResource, description: 'The revoked key.' },
    handle: ({ principal, params }) => TE.right(op(core.revokeApiKey(d)(principal, params.keyId), 200, presentApiKey)),
  }),
];
