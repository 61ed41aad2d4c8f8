import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness';
import { startTestServer } from './harness';

let s: TestServer;
let spec: any;
beforeAll(async () => {
  s = await startTestServer();
  spec = (await s.call('GET', '/api/v1/openapi.json', { key: null })).body;
});
afterAll(async () => s.close());

const refsIn = (x: unknown): string[] =>
  x === null || typeof x !== 'object' ? [] : Object.entries(x).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refsIn(v)));

describe('the OpenAPI document', () => {
  it('describes every route the server answers, with its scope, parameters and errors', async () => {
    const ops = Object.entries(spec.paths).flatMap(([path, methods]: [string, any]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(ops.sort()).toEqual(
      [
        'POST /api/v1/documents', 'GET /api/v1/documents', 'GET /api/v1/documents/{documentId}', 'GET /api/v1/documents/{documentId}/content',
        'POST /api/v1/signature-requests', 'GET /api/v1/signature-requests', 'GET /api/v1/signature-requests/{requestId}',
        'POST /api/v1/signature-requests/{requestId}/recipients', 'POST /api/v1/signature-requests/{requestId}/fields',
        'POST /api/v1/signature-requests/{requestId}/send', 'POST /api/v1/signature-requests/{requestId}/cancel',
        'POST /api/v1/signature-requests/{requestId}/remind', 'GET /api/v1/signature-requests/{requestId}/document',
        'GET /api/v1/signature-requests/{requestId}/certificate', 'GET /api/v1/test-mailbox',
        'POST /api/v1/webhooks/endpoints', 'GET /api/v1/webhooks/endpoints', 'GET /api/v1/webhooks/endpoints/{endpointId}',
        'PATCH /api/v1/webhooks/endpoints/{endpointId}', 'DELETE /api/v1/webhooks/endpoints/{endpointId}',
        'POST /api/v1/webhooks/endpoints/{endpointId}/rotate-secret', 'POST /api/v1/webhooks/endpoints/{endpointId}/test',
        'GET /api/v1/webhooks/deliveries', 'POST /api/v1/webhooks/deliveries/{deliveryId}/resend', 'GET /api/v1/logs',
        'GET /api/v1/events', 'POST /api/v1/api-keys', 'GET /api/v1/api-keys', 'DELETE /api/v1/api-keys/{keyId}',
      ].sort(),
    );
    for (const [path, methods] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
        expect(op['x-required-scope']).toMatch(/^[a-z_]+:(read|write)$/);
        expect(op.responses['401'].content['application/problem+json']).toBeDefined();
        const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect(op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name)).toEqual(pathParams);
        if (method !== 'get') expect(op.parameters.some((p: any) => p.name === 'Idempotency-Key')).toBe(true);
      }
    }
  });

  it('comes from the validating codecs: limits, enums and required fields match what the server enforces', async () => {
    const list = spec.paths['/api/v1/documents'].get.parameters;
    expect(list.find((p: any) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
    expect(list.find((p: any) => p.name === 'order').schema.enum).toEqual(['asc', 'desc']);
    const create = spec.paths['/api/v1/signature-requests'].post.requestBody.content['application/json'].schema;
    expect(create.required).toEqual(['title', 'documentIds']);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.documentIds).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    const fields = spec.paths['/api/v1/signature-requests/{requestId}/fields'].post.requestBody.content['application/json'].schema;
    expect(fields.properties.type.enum).toEqual(['signature', 'initials', 'date_signed', 'text', 'checkbox', 'name', 'email']);
  });

  it('resolves every $ref to a component', () => {
    for (const ref of refsIn(spec)) {
      const name = ref.replace('#/components/schemas/', '');
      expect(spec.components.schemas[name], ref).toBeDefined();
    }
    expect(Object.keys(spec.components.schemas)).toEqual(expect.arrayContaining(['Document', 'SignatureRequest', 'Problem', 'PageInfo']));
  });

  it('matches real responses: every key a response has is in its schema', async () => {
    const { req } = await s.draftReady();
    const got = (await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body;
    const schema = spec.components.schemas.SignatureRequest;
    expect(Object.keys(got).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(Object.keys(got.recipients[0]).sort()).toEqual(Object.keys(spec.components.schemas.Recipient.properties).sort());
  });
});
