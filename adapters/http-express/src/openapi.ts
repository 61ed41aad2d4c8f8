import type * as t from 'io-ts';
import { API_SCOPES } from '@esig/core';
import * as c from './codecs.js';
import * as E from 'fp-ts/lib/Either.js';
import type { AnySignerRoute, ResponseSpec, Route } from './route.js';
import type { JsonSchema } from './schema.js';
import { toJsonSchema } from './schema.js';

/** Codecs shown as named components (and referenced), so generated clients get proper type names. */
const COMPONENTS: ReadonlyArray<readonly [string, t.Mixed]> = [
  ['Document', c.DocumentResource],
  ['Recipient', c.RecipientResource],
  ['Field', c.FieldResource],
  ['SignatureRequest', c.SignatureRequestResource],
  ['ApiKey', c.ApiKeyResource],
  ['CreatedApiKey', c.CreatedApiKeyResource],
  ['Event', c.EventResource],
  ['PageInfo', c.PageInfo],
  ['Problem', c.Problem],
  ['SignerView', c.SignerViewResource],
];

const ERROR_RESPONSES: Record<string, string> = {
  '400': 'validation_failed',
  '401': 'unauthenticated',
  '403': 'insufficient_scope',
  '404': 'not_found',
  '409': 'invalid_state or idempotency_in_progress',
  '413': 'payload_too_large',
  '415': 'unsupported_media_type',
  '422': 'idempotency_key_reused or invalid_document',
  '429': 'rate_limited (with Retry-After)',
};

/** What any signer route may answer besides its own `errors`; `[status, description, only routes with a body]`. */
const SIGNER_ERROR_RESPONSES: ReadonlyArray<readonly [string, string, boolean]> = [
  ['400', 'validation_failed: the body is invalid (or, for authenticate, the code is wrong)', true],
  ['404', 'not_found: no such signing link (an ill-formed token included), or no such document', false],
  ['409', 'invalid_state: not allowed in the current state (already signed, not your turn, request ended, identification pending or locked)', false],
  ['413', 'payload_too_large', true],
  ['415', 'unsupported_media_type: a Content-Type other than application/json', true],
  ['429', 'rate_limited (with Retry-After); calls without an API key are counted per client address', false],
];

const SIGNING_LINK_AUTH =
  'The signing link’s token, the last path segment of `ESIG_PUBLIC_URL/sign/<token>`, is the only credential: ' +
  'no API key is needed. OpenAPI security schemes cannot name a path segment, so these operations declare ' +
  '`security: []` (no header) and carry the credential as their `token` path parameter (`x-authentication: signing-link`).';

const rateHeaders = {
  'X-Request-Id': { schema: { type: 'string' } },
  'X-RateLimit-Limit': { schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { schema: { type: 'integer' } },
  'X-RateLimit-Reset': { schema: { type: 'integer' } },
};

/** The OpenAPI 3.1 document, generated from the route table and the same io-ts codecs that validate requests. */
export const buildOpenApi = (routes: readonly Route[], signerRoutes: readonly AnySignerRoute[], publicUrl: string): JsonSchema => {
  const named = new Map<t.Mixed, string>(COMPONENTS.map(([n, codec]) => [codec, n]));
  const schemas: Record<string, JsonSchema> = {};
  for (const [n, codec] of COMPONENTS) schemas[n] = toJsonSchema(codec, new Map([...named].filter(([k]) => k !== codec)));
  const problemRef = { $ref: '#/components/schemas/Problem' };

  const paths: Record<string, Record<string, unknown>> = {};
  const addOperation = (path: string, method: string, operation: Record<string, unknown>) => {
    paths[path] = { ...(paths[path] ?? {}), [method]: operation };
  };
  const pathParameters = (params: Record<string, t.Mixed>, description: Record<string, string> = {}) =>
    Object.entries(params).map(([name, codec]) => ({ name, in: 'path', required: true, ...(description[name] ? { description: description[name] } : {}), schema: toJsonSchema(codec, named) }));
  const jsonBody = (codec: t.Mixed, required: boolean) => ({ required, content: { 'application/json': { schema: toJsonSchema(codec, named) } } });
  const success = (r: ResponseSpec, headers: Record<string, unknown>) => ({
    [String(r.status)]: {
      description: r.description,
      headers,
      content: r.codec
        ? { 'application/json': { schema: toJsonSchema(r.codec, named) } }
        : { [r.contentType ?? 'application/octet-stream']: { schema: { type: 'string', format: 'binary' } } },
    },
  });
  const problems = (byStatus: ReadonlyArray<readonly [string, string, ...unknown[]]>) =>
    Object.fromEntries(byStatus.map(([status, description]) => [status, { description, content: { 'application/problem+json': { schema: problemRef } } }]));

  for (const r of routes) {
    const parameters: unknown[] = pathParameters(r.params ?? {});
    if (r.query && r.query !== undefined) {
      const q = toJsonSchema(r.query as t.Mixed, named) as { properties?: Record<string, JsonSchema> };
      for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: 'query', required: false, schema });
    }
    if (r.kind === 'write')
      parameters.push({ name: 'Idempotency-Key', in: 'header', required: false, description: 'Repeat-safe key, 1–255 printable ASCII, kept 24 h.', schema: { type: 'string', maxLength: 255 } });

    const requestBody =
      r.body === 'pdf'
        ? {
            required: true,
            content: {
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
              'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' }, name: { type: 'string' } }, required: ['file'] } },
            },
          }
        : r.body
          ? jsonBody(r.body as t.Mixed, !r.emptyBodyAllowed)
          : undefined;

    addOperation(r.path, r.method, {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      security: [{ apiKey: [r.scope] }],
      'x-required-scope': r.scope,
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses: {
        ...success(r.response, r.kind === 'write' ? { ...rateHeaders, 'Idempotency-Replayed': { schema: { type: 'string', enum: ['true'] } } } : rateHeaders),
        ...problems(Object.entries(ERROR_RESPONSES)),
      },
    });
  }

  for (const r of signerRoutes) {
    const body = r.body as t.Mixed | undefined;
    addOperation(r.path, r.method, {
      operationId: r.operationId,
      summary: r.summary,
      tags: ['Signing'],
      security: [],
      'x-authentication': 'signing-link',
      parameters: pathParameters({ token: c.SigningToken, ...(r.params ?? {}) }, { token: 'The signing link’s token: the credential of this call.' }),
      // A missing body counts as `{}`, so the body is optional exactly where the codec accepts `{}`.
      ...(body ? { requestBody: jsonBody(body, E.isLeft(body.decode({}))) } : {}),
      responses: {
        ...success(r.response, rateHeaders),
        ...problems(SIGNER_ERROR_RESPONSES.filter(([, , needsBody]) => !needsBody || body !== undefined)),
        ...problems(Object.entries(r.errors ?? {})),
      },
    });
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'esig API',
      version: '1.0.0',
      description: 'Electronic signatures: upload documents, add recipients and fields, send, track, fetch the results.',
    },
    servers: [{ url: publicUrl }],
    security: [{ apiKey: [] }],
    tags: [{ name: 'Signing', description: `The signer API behind the signing page. ${SIGNING_LINK_AUTH}` }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: `API key (esig_test_… or esig_live_…). Scopes: ${API_SCOPES.join(', ')}, or *.` },
      },
    },
  };
};
