import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let draft: Awaited<ReturnType<TestServer['draftReady']>>;
beforeAll(async () => {
  s = await startTestServer({ ESIG_RATE_LIMIT_KEY: '100000', ESIG_RATE_LIMIT_ORG: '100000' });
  draft = await s.draftReady();
});
afterAll(async () => s.close());

/** Values shaped like what clients send, including near-misses of the real fields. */
const fieldNames = fc.constantFrom('title', 'documentIds', 'email', 'firstName', 'lastName', 'role', 'order', 'authentication', 'accessCode', 'documentId', 'recipientId', 'type', 'page', 'x', 'y', 'width', 'height', 'required', 'name', 'scopes', 'message', 'signingOrder', 'expiresAt', '__proto__', 'constructor');
const nearMiss = fc.oneof(
  fc.jsonValue(),
  fc.constantFrom('doc_', 'req_x', `doc_${'0'.repeat(26)}`, '2026-13-45T00:00:00Z', '*', 'signature', 'cc', -1, 0, 1e308, -0, '', ' ', 'a@b.c'),
  fc.array(fc.oneof(fc.string(), fc.integer()), { maxLength: 5 }),
);
const bodies = fc.oneof(
  fc.jsonValue({ maxDepth: 4 }),
  fc.dictionary(fieldNames, nearMiss, { maxKeys: 8 }),
);

const writeTargets = () => [
  ['POST', '/api/v1/signature-requests'],
  ['POST', `/api/v1/signature-requests/${draft.req.id}/recipients`],
  ['POST', `/api/v1/signature-requests/${draft.req.id}/fields`],
  ['POST', `/api/v1/signature-requests/${draft.req.id}/send`],
  ['POST', `/api/v1/signature-requests/${draft.req.id}/cancel`],
  ['POST', '/api/v1/api-keys'],
  ['DELETE', `/api/v1/api-keys/key_${'0'.repeat(26)}`],
  ['POST', '/api/v1/documents?name=f.pdf'],
] as const;

describe('no client input produces a 5xx', () => {
  it('holds for generated JSON bodies on every write route', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...writeTargets()), bodies, fc.boolean(), async ([method, path], body, withKey) => {
        const r = await s.call(method, path, { body: JSON.stringify(body), headers: withKey ? { 'idempotency-key': `fuzz-${Math.random()}` } : {} });
        expect(r.status, `${method} ${path} ${JSON.stringify(body)} → ${r.text}`).toBeLessThan(500);
        if (r.status >= 400) expect(r.headers.get('content-type')).toMatch(/problem\+json/);
      }),
      { numRuns: 300 },
    );
  });

  it('holds for generated query strings and path segments', async () => {
    const segment = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('doc_', `req_${'Z'.repeat(26)}`, '..', '%00', '%ff'));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('/api/v1/documents', '/api/v1/signature-requests', '/api/v1/events', '/api/v1/api-keys'),
        fc.dictionary(fc.constantFrom('limit', 'order', 'cursor', 'status', 'type', 'x'), fc.oneof(fc.string(), fc.constantFrom('0', '100', 'asc', 'COMPLETED'))),
        segment,
        async (base, query, seg) => {
          const qs = new URLSearchParams(query).toString();
          const list = await s.call('GET', `${base}?${qs}`);
          expect(list.status, `${base}?${qs}`).toBeLessThan(500);
          const one = await s.call('GET', `${base}/${encodeURIComponent(seg)}`);
          expect(one.status).toBeLessThan(500);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('holds for random bytes uploaded as a PDF', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), fc.boolean(), async (bytes, withHeader) => {
        const data = withHeader ? new Uint8Array([...new TextEncoder().encode('%PDF-1.7\n'), ...bytes]) : bytes;
        const r = await s.call('POST', '/api/v1/documents?name=r.pdf', { raw: { bytes: data, contentType: 'application/pdf' } });
        expect([201, 400, 413, 422]).toContain(r.status);
      }),
      { numRuns: 150 },
    );
  });
});
