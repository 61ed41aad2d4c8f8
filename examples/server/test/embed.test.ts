import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Esig, EsigInvalidRequestError } from '@esig/client';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

// Embedded sessions through the API (CONTRACT "Embedded signing"): origins, states, tenants, idempotency, and
// the page's status codes and headers. The browser side is in embed-browser.test.ts.

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_PUBLIC_URL: 'https://sign.example.com' });
});
afterAll(async () => {
  await s?.close();
});

const sessionsPath = (requestId: string, recipientId: string) => `/api/v1/signature-requests/${requestId}/recipients/${recipientId}/embedded-sessions`;

interface Signer {
  readonly email: string;
  readonly role?: 'signer' | 'cc';
  readonly order?: number;
}

/** A request with the given recipients (one signature field per signer), sent unless `send: false`. */
const request = async (opts: { signers?: readonly Signer[]; sequential?: boolean; send?: boolean; key?: string } = {}) => {
  const key = opts.key;
  const doc = await s.uploadPdf('embed.pdf', 1, key);
  const req = (await s.call('POST', '/api/v1/signature-requests', { key, body: { title: 'Embedded', documentIds: [doc.id], signingOrder: opts.sequential ? 'sequential' : 'parallel' } })).body;
  const rcps = [];
  for (const [i, r] of (opts.signers ?? [{ email: 'ada@example.com' }]).entries()) {
    const body = { email: r.email, firstName: 'Ada', lastName: `Number ${i}`, ...(r.role ? { role: r.role } : {}), ...(r.order ? { order: r.order } : {}) };
    const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { key, body })).body;
    if (r.role !== 'cc')
      await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, {
        key,
        body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 100 + i * 60, width: 200, height: 40 },
      });
    rcps.push(rcp);
  }
  if (opts.send !== false) expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { key })).status).toBe(200);
  return { req, rcps };
};

const create = (requestId: string, recipientId: string, origin: unknown, o: { key?: string; headers?: Record<string, string> } = {}) =>
  s.call('POST', sessionsPath(requestId, recipientId), { key: o.key, headers: o.headers, body: { origin } });

const tokenOf = (url: string) => /\/embed\/([A-Za-z0-9]+)$/.exec(url)![1]!;

describe('POST …/recipients/{recipientId}/embedded-sessions', () => {
  it('creates a one-time session bound to the origin, with a URL under ESIG_PUBLIC_URL and a 5-minute lifetime', async () => {
    const { req, rcps } = await request();
    const r = await create(req.id, rcps[0].id, 'https://app.example.com');
    expect(r.status).toBe(201);
    expect(Object.keys(r.body).sort()).toEqual(['createdAt', 'expiresAt', 'id', 'origin', 'recipientId', 'requestId', 'url']);
    expect(r.body.id).toMatch(/^ses_[0-9A-Za-z]{26}$/);
    expect(r.body.url).toMatch(/^https:\/\/sign\.example\.com\/embed\/[A-Za-z0-9]{43}$/);
    expect(r.body).toMatchObject({ origin: 'https://app.example.com', requestId: req.id, recipientId: rcps[0].id });
    expect(Date.parse(r.body.expiresAt) - Date.parse(r.body.createdAt)).toBe(300_000);
    // Each call mints a new session with a new token.
    const again = await create(req.id, rcps[0].id, 'https://app.example.com');
    expect(tokenOf(again.body.url)).not.toBe(tokenOf(r.body.url));
  });

  it('accepts only serialized origins: https, or http on a loopback host in test mode', async () => {
    const { req, rcps } = await request();
    const good = ['https://app.example.com', 'https://app.example.com:8443', 'https://xn--bcher-kva.example', 'https://192.0.2.10', 'http://localhost:5173', 'http://127.0.0.1:1', 'http://[::1]:8080', 'http://localhost'];
    for (const origin of good) expect({ origin, status: (await create(req.id, rcps[0].id, origin)).status }).toEqual({ origin, status: 201 });
    const bad = [
      'https://app.example.com/', 'https://app.example.com/path', 'https://app.example.com?x=1', 'https://app.example.com#f', 'https://*.example.com', '*',
      'https://App.Example.com', 'http://app.example.com', 'https://app.example.com:443', 'http://localhost:80', 'https://app.example.com:99999', 'ftp://app.example.com',
      'null', '', 'https://user@app.example.com', 'https://app.example.com https://evil.example', "https://app.example.com; script-src 'unsafe-inline'", 'https://bücher.example',
      'app.example.com', 'https://', 42, null,
    ];
    for (const origin of bad) {
      const r = await create(req.id, rcps[0].id, origin);
      expect({ origin, status: r.status, code: r.body.code }).toEqual({ origin, status: 400, code: 'validation_failed' });
    }
    const r = await create(req.id, rcps[0].id, 'https://app.example.com/');
    expect(r.body.errors).toEqual([expect.objectContaining({ path: 'origin' })]);
  });

  it('refuses loopback http in live mode', async () => {
    const live = await s.newKey('embed-live', 'live');
    const { req, rcps } = await request({ key: live });
    const r = await create(req.id, rcps[0].id, 'http://localhost:5173', { key: live });
    expect(r.status).toBe(400);
    expect((await create(req.id, rcps[0].id, 'https://app.example.com', { key: live })).status).toBe(201);
  });

  it('answers 409 invalid_state unless the request is SENT and the recipient a signer who can sign now', async () => {
    const draft = await request({ send: false });
    const states = [];
    states.push((await create(draft.req.id, draft.rcps[0].id, 'https://app.example.com')).body);

    const mixed = await request({ signers: [{ email: 'a@example.com' }, { email: 'cc@example.com', role: 'cc' }] });
    states.push((await create(mixed.req.id, mixed.rcps[1].id, 'https://app.example.com')).body);

    const seq = await request({ sequential: true, signers: [{ email: 'first@example.com', order: 1 }, { email: 'second@example.com', order: 2 }] });
    states.push((await create(seq.req.id, seq.rcps[1].id, 'https://app.example.com')).body);
    expect((await create(seq.req.id, seq.rcps[0].id, 'https://app.example.com')).status).toBe(201);

    const cancelled = await request();
    await s.call('POST', `/api/v1/signature-requests/${cancelled.req.id}/cancel`);
    states.push((await create(cancelled.req.id, cancelled.rcps[0].id, 'https://app.example.com')).body);

    for (const p of states) expect(p).toMatchObject({ status: 409, code: 'invalid_state' });
  });

  it('answers 404 for another org, the other mode, an unknown recipient; 403 without signature_requests:write', async () => {
    const { req, rcps } = await request();
    const otherOrg = await s.newKey('embed-other', 'test');
    const otherMode = await s.newKey('default', 'live');
    for (const key of [otherOrg, otherMode]) expect((await create(req.id, rcps[0].id, 'https://app.example.com', { key })).body).toMatchObject({ status: 404, code: 'not_found' });
    expect((await create(req.id, 'rcp_01JDQ4ZV8W3K5M7N9P2R4T6X99', 'https://app.example.com')).status).toBe(404);
    const reader = await s.newKey('default', 'test', ['signature_requests:read']);
    expect((await create(req.id, rcps[0].id, 'https://app.example.com', { key: reader })).body).toMatchObject({ status: 403, code: 'insufficient_scope' });
  });

  it('replays the first answer for a repeated Idempotency-Key (one session, the same URL)', async () => {
    const { req, rcps } = await request();
    const headers = { 'idempotency-key': `embed-${req.id}` };
    const first = await create(req.id, rcps[0].id, 'https://app.example.com', { headers });
    const second = await create(req.id, rcps[0].id, 'https://app.example.com', { headers });
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(second.headers.get('idempotency-replayed')).toBe('true');
    expect(second.body).toEqual(first.body);
    // Another body under the same key is refused.
    expect((await create(req.id, rcps[0].id, 'https://other.example.com', { headers })).status).toBe(422);
  });
});

describe('@esig/client signatureRequests.createEmbeddedSession', () => {
  it('creates a session, replays with the same idempotency key, and raises EsigInvalidRequestError for a bad origin', async () => {
    const esig = new Esig({ apiKey: s.key, baseUrl: s.url, fetch: s.fetch });
    const { req, rcps } = await request();
    const a = await esig.signatureRequests.createEmbeddedSession(req.id, rcps[0].id, { origin: 'https://app.example.com' }, { idempotencyKey: `client-${req.id}` });
    expect(a).toMatchObject({ origin: 'https://app.example.com', requestId: req.id, recipientId: rcps[0].id });
    expect(a.id).toMatch(/^ses_/);
    const b = await esig.signatureRequests.createEmbeddedSession(req.id, rcps[0].id, { origin: 'https://app.example.com' }, { idempotencyKey: `client-${req.id}` });
    expect(b).toEqual(a);
    await expect(esig.signatureRequests.createEmbeddedSession(req.id, rcps[0].id, { origin: 'https://app.example.com/' })).rejects.toBeInstanceOf(EsigInvalidRequestError);
  });
});

describe('GET /embed/{token}', () => {
  const get = (path: string) => fetch(`${s.url}${path}`, { redirect: 'manual' });

  it('serves the signing page once, framable by the bound origin only, without cookies; then 410', async () => {
    const { req, rcps } = await request();
    const token = tokenOf((await create(req.id, rcps[0].id, 'https://app.example.com:8443')).body.url);
    // A HEAD does not consume it.
    expect((await fetch(`${s.url}/embed/${token}`, { method: 'HEAD' })).status).toBe(405);
    const first = await get(`/embed/${token}`);
    expect(first.status).toBe(200);
    const csp = first.headers.get('content-security-policy')!;
    expect(csp).toMatch(/(^|; )frame-ancestors https:\/\/app\.example\.com:8443(;|$)/);
    expect(csp).not.toContain("'unsafe-inline'");
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    expect(first.headers.get('cache-control')).toBe('no-store');
    expect(first.headers.get('x-frame-options')).toBeNull();
    expect(first.headers.get('set-cookie')).toBeNull();
    const html = await first.text();
    expect(html).toContain('id="esig-embed"');
    expect(html).not.toContain(token);

    const second = await get(`/embed/${token}`);
    expect(second.status).toBe(410);
    expect(second.headers.get('content-security-policy')).toContain('frame-ancestors https://app.example.com:8443');
    const gone = await second.text();
    expect(gone).toContain('already used');
    expect(gone).toContain('"code":"session_used"');
    expect(gone).not.toContain('credential');
  });

  it('answers 404 with a readable page for an unknown token, never framable; /sign/ pages are never framable', async () => {
    const unknown = await get(`/embed/${'A'.repeat(43)}`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('text/html');
    expect(unknown.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await unknown.text()).toContain('does not exist');
    expect((await get('/embed/short')).status).toBe(404);
    const sign = await get(`/sign/${'A'.repeat(43)}`);
    expect(sign.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });

  it('serves /embed.js cacheable, versioned by ETag, with a 304 for a matching If-None-Match', async () => {
    const r = await get('/embed.js');
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('javascript');
    expect(await r.text()).toContain('EsigEmbed');
    const etag = r.headers.get('etag')!;
    expect(etag).toMatch(/^"[0-9a-f]{16}"$/);
    expect(r.headers.get('cache-control')).toBe('public, max-age=300');
    const v = await get(`/embed.js?v=${etag.slice(1, -1)}`);
    expect(v.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    const again = await fetch(`${s.url}/embed.js`, { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
  });
});

describe('an unused embedded session expires after ESIG_EMBED_SESSION_TTL_S', () => {
  it('answers 410 session_expired once the lifetime has passed', async () => {
    const short = await startTestServer({ ESIG_EMBED_SESSION_TTL_S: '1' });
    try {
      const { req, rcp } = await short.draftReady();
      await short.call('POST', `/api/v1/signature-requests/${req.id}/send`);
      const r = await short.call('POST', sessionsPath(req.id, rcp.id), { body: { origin: 'https://app.example.com' } });
      expect(Date.parse(r.body.expiresAt) - Date.parse(r.body.createdAt)).toBe(1000);
      await new Promise((done) => setTimeout(done, 1100));
      const page = await fetch(`${short.url}/embed/${tokenOf(r.body.url)}`);
      expect(page.status).toBe(410);
      const html = await page.text();
      expect(html).toContain('"code":"session_expired"');
      expect(html).toContain('expired');
    } finally {
      await short.close();
    }
  });
});

describe('the example host app (examples/embed-host)', () => {
  it('creates a demo request with its key, serves a page with a fresh session bound to its origin, and verifies on the server', async () => {
    const path = new URL('../../embed-host/server.mjs', import.meta.url).href;
    const { createHostServer } = await import(path);
    const probe = createServer();
    await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
    const port = (probe.address() as AddressInfo).port;
    await new Promise((done) => probe.close(done));
    const origin = `http://127.0.0.1:${port}`;
    const host = createHostServer({ esigUrl: s.url, apiKey: s.key, origin });
    await new Promise<void>((done) => host.listen(port, '127.0.0.1', done));
    try {
      const start = await fetch(`${origin}/start`, { method: 'POST', redirect: 'manual' });
      expect(start.status).toBe(303);
      const location = start.headers.get('location')!;
      const requestId = new URL(location, origin).searchParams.get('request')!;
      const page = await (await fetch(`${origin}${location}`)).text();
      expect(page).toMatch(/<esig-signing url="https:\/\/sign\.example\.com\/embed\/[A-Za-z0-9]{43}">/);
      expect(page).toContain(`<script src="${s.url}/embed.js">`);
      expect(page).not.toContain(s.key);
      const status = await (await fetch(`${origin}/status?request=${requestId}`)).json();
      expect(status).toMatchObject({ status: 'SENT', recipients: [{ id: expect.stringMatching(/^rcp_/) }] });
    } finally {
      await new Promise((done) => host.close(done));
    }
  });
});
