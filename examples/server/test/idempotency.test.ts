import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { sendsOnceUnderConcurrency } from './idempotency-checks.js';

let s: TestServer;
beforeAll(async () => {
  // No background workers: a replay must write no event, and a worker's `signer.notified` for an earlier
  // send could land between the two looks at the event log at any moment.
  s = await startTestServer({ ESIG_WORKERS: 'none' });
});
afterAll(async () => s.close());

let n = 0;
const freshKey = () => `idem-${Date.now()}-${n++}`;

describe('idempotency on every write route', () => {
  type Call = { method: string; path: string; opts: Parameters<TestServer['call']>[2] };
  /**
   * Each write route: a first call, and a valid but different request (another body or another target)
   * to send under the same key.
   */
  const routes: Array<[string, () => Promise<{ first: Call; other: Call }>]> = [
    ['upload (raw)', async () => ({
      first: { method: 'POST', path: '/api/v1/documents?name=a.pdf', opts: { raw: { bytes: await makePdf(1), contentType: 'application/pdf' } } },
      other: { method: 'POST', path: '/api/v1/documents?name=a.pdf', opts: { raw: { bytes: await makePdf(2), contentType: 'application/pdf' } } },
    })],
    ['create request', async () => {
      const call = async (title: string): Promise<Call> => ({ method: 'POST', path: '/api/v1/signature-requests', opts: { body: { title, documentIds: [(await s.uploadPdf()).id] } } });
      return { first: await call('T'), other: await call('U') };
    }],
    ['add recipient', async () => {
      const { req } = await s.draftReady();
      const call = (firstName: string): Call => ({ method: 'POST', path: `/api/v1/signature-requests/${req.id}/recipients`, opts: { body: { email: 'b@example.com', firstName, lastName: 'C' } } });
      return { first: call('B'), other: call('D') };
    }],
    ['add field', async () => {
      const { req, doc, rcp } = await s.draftReady();
      const call = (x: number): Call => ({ method: 'POST', path: `/api/v1/signature-requests/${req.id}/fields`, opts: { body: { documentId: doc.id, recipientId: rcp.id, type: 'text', page: 2, x, y: 1, width: 10, height: 10 } } });
      return { first: call(1), other: call(2) };
    }],
    ['send', async () => {
      const call = async (): Promise<Call> => ({ method: 'POST', path: `/api/v1/signature-requests/${(await s.draftReady()).req.id}/send`, opts: { body: {} } });
      return { first: await call(), other: await call() };
    }],
    ['cancel', async () => {
      const call = async (): Promise<Call> => ({ method: 'POST', path: `/api/v1/signature-requests/${(await s.draftReady()).req.id}/cancel`, opts: {} });
      return { first: await call(), other: await call() };
    }],
    ['create API key', async () => {
      const call = (name: string): Call => ({ method: 'POST', path: '/api/v1/api-keys', opts: { body: { name, scopes: ['documents:read'] } } });
      return { first: call('k1'), other: call('k2') };
    }],
    ['revoke API key', async () => {
      const call = async (): Promise<Call> => {
        const k = await s.call('POST', '/api/v1/api-keys', { body: { name: 'k', scopes: ['documents:read'] } });
        return { method: 'DELETE', path: `/api/v1/api-keys/${k.body.id}`, opts: {} };
      };
      return { first: await call(), other: await call() };
    }],
  ];

  it.each(routes)('%s: same key and request replays the stored response; a different request is rejected', async (_name, setup) => {
    const { first: call, other } = await setup();
    const key = freshKey();
    const first = await s.call(call.method, call.path, { ...call.opts, headers: { 'idempotency-key': key } });
    expect(first.status).toBeLessThan(300);
    expect(first.headers.get('idempotency-replayed')).toBeNull();

    // The newest event (the log is newest first): a count of a capped page would stop changing at the cap.
    const newestEvent = async () => (await s.call('GET', '/api/v1/events?limit=1')).body.data[0]?.id as string | undefined;
    const newestBefore = await newestEvent();
    expect(newestBefore).toBeDefined();
    const again = await s.call(call.method, call.path, { ...call.opts, headers: { 'idempotency-key': key } });
    expect(again.status).toBe(first.status);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
    // Not performed a second time: no new event was written.
    expect(await newestEvent()).toBe(newestBefore);

    const conflict = await s.call(other.method, other.path, { ...other.opts, headers: { 'idempotency-key': key } });
    expect(conflict.status).toBe(422);
    expect(conflict.body.code).toBe('idempotency_key_reused');
    // The different request was not performed either; without the key it would have succeeded.
    const plain = await s.call(other.method, other.path, other.opts);
    expect(plain.status).toBeLessThan(300);
  });

  it('treats JSON bodies by meaning: key order and spacing do not make a different request', async () => {
    const doc = await s.uploadPdf();
    const key = freshKey();
    const a = await s.call('POST', '/api/v1/signature-requests', { body: `{"title":"T","documentIds":["${doc.id}"]}`, headers: { 'idempotency-key': key } });
    const b = await s.call('POST', '/api/v1/signature-requests', { body: `{ "documentIds": [ "${doc.id}" ],  "title": "T" }`, headers: { 'idempotency-key': key } });
    expect(a.status).toBe(201);
    expect(b.headers.get('idempotency-replayed')).toBe('true');
    expect(b.body.id).toBe(a.body.id);
  });

  it('sends exactly once under 25 concurrent calls with one key', async () => {
    await sendsOnceUnderConcurrency(s, freshKey());
  });

  it('stores an outcome error and replays it, since the operation did run', async () => {
    const doc = await s.uploadPdf();
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'No signer', documentIds: [doc.id] } })).body;
    const key = freshKey();
    const first = await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { headers: { 'idempotency-key': key } });
    expect(first.status).toBe(409);
    const again = await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { headers: { 'idempotency-key': key } });
    expect(again.status).toBe(409);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(first.text);
  });

  it('does not store rejections made before the operation starts (validation, auth, scope)', async () => {
    const key = freshKey();
    const bad = await s.call('POST', '/api/v1/signature-requests', { body: { title: '' }, headers: { 'idempotency-key': key } });
    expect(bad.status).toBe(400);
    const doc = await s.uploadPdf();
    const good = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'ok', documentIds: [doc.id] }, headers: { 'idempotency-key': key } });
    expect(good.status).toBe(201);
    expect(good.headers.get('idempotency-replayed')).toBeNull();
  });

  it('scopes keys per organization and mode', async () => {
    const key = freshKey();
    const live = await s.newKey('default', 'live');
    const other = await s.newKey('globex', 'test');
    const make = (k?: string) => s.call('POST', '/api/v1/api-keys', { key: k, body: { name: 'same', scopes: ['documents:read'] }, headers: { 'idempotency-key': key } });
    const results = [await make(), await make(live), await make(other)];
    expect(results.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(results.every((r) => r.headers.get('idempotency-replayed') === null)).toBe(true);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(3);
  });

  it.each([
    ['empty', ''],
    ['too long', 'x'.repeat(256)],
    ['non-ASCII', 'cl\u00e9'],
  ])('rejects an %s Idempotency-Key', async (_n, key) => {
    const doc = await s.uploadPdf();
    const r = await s.call('POST', '/api/v1/signature-requests', { body: { title: 't', documentIds: [doc.id] }, headers: { 'idempotency-key': key } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0].path).toBe('Idempotency-Key');
  });
});
