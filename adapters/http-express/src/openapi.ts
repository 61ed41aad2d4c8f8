import type * as t from 'io-ts';
import { API_SCOPES } from '@esig/core';
import * as c from './codecs';
import type { Route } from './route';
import type { JsonSchema } from './schema';
import { toJsonSchema } from './schema';

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

const rateHeaders = {
  'X-Request-Id': { schema: { type: 'string' } },
  'X-RateLimit-Limit': { schema: { type: 'integer' } },
  'X-RateLimit-Remaining': { schema: { type: 'integer' } },
  'X-RateLimit-Reset': { schema: { type: 'integer' } },
};

/** The OpenAPI 3.1 document, generated from the route table and the same io-ts codecs that validate requests. */
export const buildOpenApi = (routes: readonly Route[], publicUrl: string): JsonSchema => {
  const named = new Map<t.Mixed, string>(COMPONENTS.map(([n, codec]) => [codec, n]));
  const schemas: Record<string, JsonSchema> = {};
  for (const [n, codec] of COMPONENTS) schemas[n] = toJsonSchema(codec, new Map([...named].filter(([k]) => k !== codec)));
  const problemRef = { $ref: '#/components/schemas/Problem' };

  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const parameters: unknown[] = [];
    for (const [name, codec] of Object.entries(r.params ?? {}))
      parameters.push({ name, in: 'path', required: true, schema: toJsonSchema(codec as t.Mixed, named) });
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
          ? { required: !r.emptyBodyAllowed, content: { 'application/json': { schema: toJsonSchema(r.body as t.Mixed, named) } } }
          : undefined;

    const ok = r.response.codec
      ? { 'application/json': { schema: toJsonSchema(r.response.codec, named) } }
      : { [r.response.contentType ?? 'application/octet-stream']: { schema: { type: 'string', format: 'binary' } } };
    const responses: Record<string, unknown> = {
      [String(r.response.status)]: {
        description: r.response.description,
        headers: r.kind === 'write' ? { ...rateHeaders, 'Idempotency-Replayed': { schema: { type: 'string', enum: ['true'] } } } : rateHeaders,
        content: ok,
      },
    };
    for (const [status, code] of Object.entries(ERROR_RESPONSES))
      responses[status] = { description: code, content: { 'application/problem+json': { schema: problemRef } } };

    paths[r.path] = {
      ...(paths[r.path] ?? {}),
      [r.method]: {
        operationId: r.operationId,
        summary: r.summary,
        tags: [r.tag],
        security: [{ apiKey: [r.scope] }],
        'x-required-scope': r.scope,
        parameters,
        ...(requestBody ? { requestBody } : {}),
        responses,
      },
    };
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
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: `API key (esig_test_… or esig_live_…). Scopes: ${API_SCOPES.join(', ')}, or *.` },
      },
    },
  };
};
