import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer();
});
afterAll(async () => s.close());

const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, code, type: expect.any(String), title: expect.any(String), detail: expect.any(String), requestId: r.headers.get('x-request-id') });
};

describe('authentication', () => {
  it.each([
    ['no Authorization header', {}],
    ['a non-Bearer scheme', { headers: { authorization: `Basic ${btoa('a:b')}` } }],
    ['a malformed key', { key: 'esig_test_short' }],
    ['an unknown well-formed key', { key: `esig_test_${'A'.repeat(32)}` }],
    ['a live-looking unknown key', { key: `esig_live_${'b'.repeat(40)}` }],
  ])('refuses %s with 401', async (_name, o: any) => {
    const r = await s.call('GET', '/api/v1/documents', { key: o.key ?? null, headers: o.headers });
    expectProblem(r, 401, 'unauthenticated');
  });

  it('revokes a key at once', async () => {
    const created = await s.call('POST', '/api/v1/api-keys', { body: { name: 'temp', scopes: ['documents:read'] } });
    expect(created.status).toBe(201);
    const secret = created.body.secret;
    expect((await s.call('GET', '/api/v1/documents', { key: secret })).status).toBe(200);
    const revoked = await s.call('DELETE', `/api/v1/api-keys/${created.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    expectProblem(await s.call('GET', '/api/v1/documents', { key: secret }), 401, 'unauthenticated');
  });
});

describe('API keys', () => {
  it('shows the secret once, stores only its hash, lists without secrets', async () => {
    const created = await s.call('POST', '/api/v1/api-keys', { body: { name: 'ci', scopes: ['documents:read', 'documents:write'] } });
    expect(created.status).toBe(201);
    expect(created.body.secret).toMatch(/^esig_test_[A-Za-z0-9]{32}$/);
    expect(created.body).toMatchObject({ name: 'ci', scopes: ['documents:read', 'documents:write'], testMode: true, revokedAt: null });
    expect(created.body.secret.startsWith(created.body.prefix)).toBe(true);

    const list = await s.call('GET', '/api/v1/api-keys?limit=100');
    expect(list.status).toBe(200);
    expect(list.text).not.toContain(created.body.secret);
    expect(list.body.data.some((k: { id: string }) => k.id === created.body.id)).toBe(true);
    expect(list.body.data.every((k: object) => !('secret' in k) && !('secretHash' in k))).toBe(true);

    // Neither this secret nor the bootstrap one is anywhere in the database file.
    const db = Buffer.concat(['esig.db', 'esig.db-wal'].map((f) => { try { return readFileSync(join(s.dir, f)); } catch { return Buffer.alloc(0); } }));
    expect(db.includes(Buffer.from(created.body.secret))).toBe(false);
    expect(db.includes(Buffer.from(s.key))).toBe(false);
  });

  it('never mints a key stronger than its creator', async () => {
    const narrow = (await s.call('POST', '/api/v1/api-keys', { body: { name: 'narrow', scopes: ['api_keys:write', 'documents:read'] } })).body.secret;
    const ok = await s.call('POST', '/api/v1/api-keys', { key: narrow, body: { name: 'sub', scopes: ['documents:read'] } });
    expect(ok.status).toBe(201);
    const up = await s.call('POST', '/api/v1/api-keys', { key: narrow, body: { name: 'sub', scopes: ['documents:write'] } });
    expectProblem(up, 403, 'insufficient_scope');
    expect(up.body.detail).toContain('documents:write');
    expectProblem(await s.call('POST', '/api/v1/api-keys', { key: narrow, body: { name: 'sub', scopes: ['*'] } }), 403, 'insufficient_scope');
  });

  it('rejects unknown scopes', async () => {
    const r = await s.call('POST', '/api/v1/api-keys', { body: { name: 'x', scopes: ['documents:delete'] } });
    expectProblem(r, 400, 'validation_failed');
    expect(r.body.errors[0].path).toBe('scopes.0');
  });
});

describe('scopes', () => {
  const calls: Array<[string, string, string, unknown?]> = [
    ['GET', '/api/v1/documents', 'documents:read'],
    ['POST', '/api/v1/documents?name=a.pdf', 'documents:write'],
    ['GET', '/api/v1/signature-requests', 'signature_requests:read'],
    ['POST', '/api/v1/signature-requests', 'signature_requests:write', { title: 't', documentIds: ['doc_00000000000000000000000000'] }],
    ['GET', '/api/v1/events', 'signature_requests:read'],
    ['GET', '/api/v1/api-keys', 'api_keys:write'],
    ['POST', '/api/v1/api-keys', 'api_keys:write', { name: 'x', scopes: ['documents:read'] }],
  ];

  it.each(calls)('%s %s needs %s', async (method, path, scope, body) => {
    const other = scope === 'documents:read' ? 'signature_requests:read' : 'documents:read';
    const key = await s.newKey('default', 'test', [other as any]);
    const r = await s.call(method, path, method === 'POST' && body === undefined ? { key, raw: { bytes: '%PDF-', contentType: 'application/pdf' } } : { key, body });
    expectProblem(r, 403, 'insufficient_scope');
    expect(r.body.detail).toContain(scope);
  });
});

describe('modes and organizations', () => {
  it('keeps test and live data apart, and orgs apart, answering 404 without revealing existence', async () => {
    const live = await s.newKey('default', 'live');
    const otherOrg = await s.newKey('acme', 'test');
    const { doc, req } = await s.draftReady();

    for (const key of [live, otherOrg]) {
      expectProblem(await s.call('GET', `/api/v1/documents/${doc.id}`, { key }), 404, 'not_found');
      expectProblem(await s.call('GET', `/api/v1/documents/${doc.id}/content`, { key }), 404, 'not_found');
      expectProblem(await s.call('GET', `/api/v1/signature-requests/${req.id}`, { key }), 404, 'not_found');
      expectProblem(await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { key }), 404, 'not_found');
      expectProblem(await s.call('POST', `/api/v1/signature-requests/${req.id}/cancel`, { key }), 404, 'not_found');
      expectProblem(
        await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { key, body: { email: 'a@b.co', firstName: 'A', lastName: 'B' } }),
        404,
        'not_found',
      );
      const using = await s.call('POST', '/api/v1/signature-requests', { key, body: { title: 'steal', documentIds: [doc.id] } });
      expect(using.status).toBe(400);
      for (const path of ['/api/v1/documents', '/api/v1/signature-requests', '/api/v1/events']) {
        const list = await s.call('GET', `${path}?limit=100`, { key });
        expect(list.status).toBe(200);
        expect(list.text).not.toContain(doc.id);
        expect(list.text).not.toContain(req.id);
      }
    }

    // A live key's own data is live.
    const liveDoc = await s.uploadPdf('live.pdf', 1, live);
    expect((await s.call('GET', `/api/v1/documents/${liveDoc.id}`, { key: live })).body.testMode).toBe(false);
    expectProblem(await s.call('GET', `/api/v1/documents/${liveDoc.id}`), 404, 'not_found');
    // And the still-intact test request can be sent by its owner.
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  });

  it('a test key cannot revoke a live key', async () => {
    const created = await s.call('POST', '/api/v1/api-keys', { key: await s.newKey('default', 'live'), body: { name: 'live-one', scopes: ['documents:read'] } });
    expect(created.body.testMode).toBe(false);
    expectProblem(await s.call('DELETE', `/api/v1/api-keys/${created.body.id}`), 404, 'not_found');
    expect((await s.call('GET', '/api/v1/documents', { key: created.body.secret })).status).toBe(200);
  });
});
