// @esig/client against a real server: the whole API through it, pagination under inserts, retries through a
// proxy that fails on purpose, 429 with Retry-After, every error code, and webhook verification of a real
// delivery.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Document, FetchLike } from '@esig/client';
import {
  Esig,
  EsigAPIError,
  EsigAuthenticationError,
  EsigConnectionError,
  EsigError,
  EsigIdempotencyError,
  EsigInvalidRequestError,
  EsigInvalidStateError,
  EsigNotFoundError,
  EsigPermissionError,
  EsigRateLimitError,
  EsigSignatureVerificationError,
  EsigTimeoutError,
} from '@esig/client';
import type { HttpsReceiver } from '@esig/testkit/https-receiver';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { makeEncryptedPdf, makePdf } from '@esig/testkit/pdf';
import { PROBLEMS } from '@esig/http-express';
import { createKey, loadConfig, startServer } from '../src/index.js';
import type { FailingProxy } from './failing-proxy.js';
import { startFailingProxy } from './failing-proxy.js';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let rx: HttpsReceiver;
let esig: Esig;
beforeAll(async () => {
  rx = await startHttpsReceiver();
  s = await startTestServer({
    ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
    ESIG_WEBHOOK_CA_FILE: rx.certFile,
    ESIG_WEBHOOK_RETRY_SCALE: '0.00005',
    ESIG_WORKER_POLL_MS: '20',
    ESIG_MAX_UPLOAD_BYTES: String(256 * 1024),
    ESIG_BODY_TIMEOUT_S: '2',
  });
  // Every answer the client gets from the server is checked against the OpenAPI document on its way in.
  esig = new Esig({ apiKey: s.key, baseUrl: s.url, fetch: s.fetch });
});
afterAll(async () => {
  await s?.close();
  await rx?.close();
});

const until = async <T>(probe: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> => {
  for (const end = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
  }
};
const rejection = async (p: Promise<unknown>): Promise<EsigError> => {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  if (!(e instanceof EsigError)) throw new Error(`expected an EsigError, got ${String(e)}`);
  return e;
};
/** A `fetch` that records each attempt (the client's `fetch` option, as a proxy or a test would use it). */
const recordingFetch = (inner: FetchLike = (url, init) => s.fetch(url, init)) => {
  const attempts: Array<{ method: string; url: string; headers: Headers; status?: number; at: number; answeredAt?: number; retryAfter?: string | null }> = [];
  const f: FetchLike = async (url, init) => {
    const a = { method: init.method ?? 'GET', url, headers: new Headers(init.headers), at: Date.now() } as (typeof attempts)[number];
    attempts.push(a);
    const res = await inner(url, init);
    Object.assign(a, { status: res.status, answeredAt: Date.now(), retryAfter: res.headers.get('retry-after') });
    return res;
  };
  return { attempts, fetch: f };
};

describe('the whole flow through the client', () => {
  it('uploads, drafts, sends once, is signed, and hands over the finished PDF and the certificate', async () => {
    const pdf = await makePdf(2);
    const doc = await esig.documents.upload(pdf, { name: 'Client flow.pdf' });
    expect(doc).toMatchObject({ name: 'Client flow.pdf', status: 'UPLOADED', pageCount: 2, sizeBytes: pdf.byteLength, testMode: true });
    expect(await esig.documents.content(doc.id)).toEqual(pdf);
    expect(await esig.documents.get(doc.id)).toEqual(doc);

    const req = await esig.signatureRequests.create({ title: 'Client flow', documentIds: [doc.id], message: 'Please sign.' });
    expect(req).toMatchObject({ status: 'DRAFT', documentIds: [doc.id], recipients: [], message: 'Please sign.' });
    const rcp = await esig.signatureRequests.addRecipient(req.id, { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' });
    const field = await esig.signatureRequests.addField(req.id, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 2, x: 72, y: 600, width: 200, height: 50 });
    expect(field).toMatchObject({ id: expect.stringMatching(/^fld_/), required: true, value: null });

    const sent = await esig.signatureRequests.send(req.id, { idempotencyKey: `send-${req.id}` });
    expect(sent.status).toBe('SENT');
    // The same key again: the stored answer, nothing sent twice. A new key: the request is no longer a draft.
    expect(await esig.signatureRequests.send(req.id, { idempotencyKey: `send-${req.id}` })).toEqual(sent);
    const twice = await rejection(esig.signatureRequests.send(req.id));
    expect(twice).toBeInstanceOf(EsigInvalidStateError);
    expect(twice).toMatchObject({ status: 409, code: 'invalid_state', requestId: expect.stringMatching(/^log_/) });

    expect((await esig.signatureRequests.get(req.id)).status).toBe('SENT');
    const ids: string[] = [];
    for await (const r of esig.signatureRequests.list({ status: 'SENT', limit: 100 })) ids.push(r.id);
    expect(ids).toContain(req.id);
    const types: string[] = [];
    for await (const e of esig.events.list({ order: 'asc' })) types.push(e.type);
    expect(types).toEqual(expect.arrayContaining(['document.created', 'request.sent']));

    // The signer's part: the link from the test mailbox, then the signer API (no API key), as the signing page calls it.
    const token = await until(async () => {
      for await (const m of esig.testMailbox.list({ to: 'grace@example.com' })) {
        const t = /\/sign\/([A-Za-z0-9]{43,})/.exec(m.text)?.[1];
        if (t) return t;
      }
      return undefined;
    }, 'the invitation');
    expect((await s.call('GET', `/api/v1/signing/${token}`, { key: null })).status).toBe(200);
    const signed = await s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body: { values: {}, signature: { kind: 'typed', value: 'Grace Hopper' } } });
    expect(signed.status).toBe(200);

    const finished = await until(
      () =>
        esig.signatureRequests.finishedDocument(req.id).catch((e: unknown) => {
          if (e instanceof EsigInvalidStateError) return undefined; // sealing takes a moment
          throw e;
        }),
      'the finished PDF',
    );
    expect(new TextDecoder().decode(finished.subarray(0, 5))).toBe('%PDF-');
    const done = await esig.signatureRequests.get(req.id);
    expect(done).toMatchObject({ status: 'COMPLETED', certificateId: expect.stringMatching(/^coc_/) });
    const certificate = await esig.signatureRequests.certificate(req.id);
    expect(certificate).toMatchObject({ certificateId: done.certificateId, requestId: req.id, requestedSignatureLevel: 'SES', documents: [{ id: doc.id, pageCount: 2 }] });
    expect(certificate.recipients[0]).toMatchObject({ id: rcp.id, signatureKind: 'typed' });
    const certificatePdf = await esig.signatureRequests.certificatePdf(req.id);
    expect(new TextDecoder().decode(certificatePdf.subarray(0, 5))).toBe('%PDF-');

    const log: string[] = [];
    for await (const l of esig.logs.list({ kind: 'api', limit: 100 })) log.push(`${l.method} ${l.target}`);
    expect(log).toContain(`POST /api/v1/signature-requests/${req.id}/send`);
  }, 60_000);

  it('cancels and reminds, and answers the client’s own User-Agent and Esig-Client', async () => {
    const rec = recordingFetch();
    const c = new Esig({ apiKey: s.key, baseUrl: s.url, fetch: rec.fetch });
    const doc = await c.documents.upload(await makePdf(1), { name: 'remind.pdf' });
    const req = await c.signatureRequests.create({ title: 'Remind me', documentIds: [doc.id] });
    const rcp = await c.signatureRequests.addRecipient(req.id, { email: 'remind@example.com', firstName: 'Re', lastName: 'Mind' });
    await c.signatureRequests.addField(req.id, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 });
    await c.signatureRequests.send(req.id);
    expect((await c.signatureRequests.remind(req.id)).status).toBe('SENT');
    expect((await c.signatureRequests.cancel(req.id)).status).toBe('CANCELLED');
    expect((await c.documents.get(doc.id)).status).toBe('CANCELLED');
    for (const a of rec.attempts) {
      expect(a.headers.get('esig-client')).toBe('esig-client-js/0.1.0');
      expect(a.headers.get('user-agent')).toBe('esig-client-js/0.1.0');
      expect(a.headers.get('idempotency-key') !== null).toBe(a.method !== 'GET');
    }
  });

  it('manages API keys and webhook endpoints, and verifies a real delivery with constructEvent', async () => {
    const created = await esig.apiKeys.create({ name: 'reporting', scopes: ['documents:read'] });
    expect(created.secret).toMatch(/^esig_test_/);
    const keys: string[] = [];
    for await (const k of esig.apiKeys.list()) keys.push(k.id);
    expect(keys).toContain(created.id);
    const reader = new Esig({ apiKey: created.secret, baseUrl: s.url, fetch: s.fetch });
    expect(await reader.documents.list({ limit: 1 }).page()).toMatchObject({ pageInfo: { limit: 1 } });
    expect((await esig.apiKeys.revoke(created.id)).revokedAt).not.toBeNull();
    expect(await rejection(reader.documents.list().page())).toBeInstanceOf(EsigAuthenticationError);

    const hook = await esig.webhooks.endpoints.create({ url: `${rx.url}/client-hook`, events: ['document.created'], description: 'client' });
    expect(hook.secret).toMatch(/^whsec_/);
    expect(await esig.webhooks.endpoints.get(hook.id)).toMatchObject({ id: hook.id, enabled: true });
    const listed: string[] = [];
    for await (const e of esig.webhooks.endpoints.list()) listed.push(e.id);
    expect(listed).toContain(hook.id);
    expect((await esig.webhooks.endpoints.update(hook.id, { description: 'renamed' })).description).toBe('renamed');

    const doc = await esig.documents.upload(await makePdf(1), { name: 'hooked.pdf' });
    const [delivery] = await rx.waitFor((r) => r.path === '/client-hook' && r.raw.includes(doc.id));
    const header = String(delivery!.headers['esig-signature']);
    const event = await Esig.webhooks.constructEvent(delivery!.raw, header, hook.secret);
    expect(event).toMatchObject({ type: 'document.created', test_mode: true, data: { document_id: doc.id } });
    expect(event.id).toBe(delivery!.headers['esig-event-id']);
    // The instance carries the same helper; a changed byte, another secret or a late arrival is refused.
    expect((await esig.webhooks.constructEvent(new Uint8Array(delivery!.raw), header, [hook.secret])).id).toBe(event.id);
    const tampered = Buffer.from(delivery!.raw);
    tampered[tampered.length - 2]! ^= 1;
    for (const bad of [
      () => Esig.webhooks.constructEvent(tampered, header, hook.secret),
      () => Esig.webhooks.constructEvent(delivery!.raw, header, 'whsec_wrong'),
      () => Esig.webhooks.constructEvent(delivery!.raw, header, hook.secret, 300, { now: () => Date.now() + 301_000 }),
      () => Esig.webhooks.constructEvent(delivery!.raw, undefined, hook.secret),
    ])
      expect(await rejection(bad())).toBeInstanceOf(EsigSignatureVerificationError);

    // After a rotation every delivery carries both signatures: either secret verifies it.
    const rotated = await esig.webhooks.endpoints.rotateSecret(hook.id);
    expect(rotated.secret).not.toBe(hook.secret);
    const test = await esig.webhooks.endpoints.test(hook.id);
    expect(test).toMatchObject({ endpointId: hook.id, eventType: 'webhook.test', status: 'pending' });
    const [tested] = await rx.waitFor((r) => r.path === '/client-hook' && r.headers['esig-event-type'] === 'webhook.test');
    for (const secret of [rotated.secret, hook.secret]) {
      expect((await Esig.webhooks.constructEvent(tested!.raw, String(tested!.headers['esig-signature']), secret)).type).toBe('webhook.test');
    }

    const attempts = await until(async () => {
      const all = [];
      for await (const a of esig.webhooks.deliveries.list({ endpointId: hook.id })) all.push(a);
      return all.length >= 2 ? all : undefined;
    }, 'two logged attempts');
    const resent = await esig.webhooks.deliveries.resend(attempts[0]!.deliveryId);
    expect(resent).toMatchObject({ endpointId: hook.id, status: 'pending' });
    expect(resent.id).not.toBe(attempts[0]!.deliveryId);
    expect((await esig.webhooks.endpoints.delete(hook.id)).id).toBe(hook.id);
    expect(await rejection(esig.webhooks.endpoints.get(hook.id))).toBeInstanceOf(EsigNotFoundError);
  }, 60_000);
});

describe('pagination', () => {
  it('walks every page exactly once with for await, while an insert happens between pages', async () => {
    const key = await s.newKey('paging-org', 'test');
    const rec = recordingFetch();
    const c = new Esig({ apiKey: key, baseUrl: s.url, fetch: rec.fetch });
    for (let i = 0; i < 7; i++) await c.documents.upload(await makePdf(1), { name: `page-${i}.pdf` });

    for (const order of ['desc', 'asc'] as const) {
      const before = (await c.documents.list({ limit: 100, order }).page()).data.map((d) => d.id);
      rec.attempts.length = 0;
      const seen: string[] = [];
      let inserted: Document | undefined;
      for await (const d of c.documents.list({ limit: 2, order })) {
        seen.push(d.id);
        // The first entry of the second page: that page is fetched, the next ones are not yet.
        if (seen.length === 3) inserted = await c.documents.upload(await makePdf(1), { name: `inserted-${order}.pdf` });
      }
      // Newest first: the new document is before the cursor and not seen. Oldest first: it comes last, once.
      expect(seen).toEqual(order === 'desc' ? before : [...before, inserted!.id]);
      const pages = rec.attempts.filter((a) => a.method === 'GET');
      expect(pages.length).toBe(Math.ceil(seen.length / 2));
      expect(pages.length).toBeGreaterThanOrEqual(4);
      expect(new Set(pages.map((p) => p.url)).size).toBe(pages.length);
    }
  });

  it('gives one page with page(), and the next from its cursor', async () => {
    const key = await s.newKey('page-org', 'test');
    const c = new Esig({ apiKey: key, baseUrl: s.url, fetch: s.fetch });
    for (let i = 0; i < 3; i++) await c.documents.upload(await makePdf(1), { name: `p${i}.pdf` });
    const first = await c.documents.list({ limit: 2 }).page();
    expect(first.data).toHaveLength(2);
    expect(first.pageInfo).toMatchObject({ limit: 2, order: 'desc', hasMore: true });
    const second = await c.documents.list({ limit: 2, cursor: first.pageInfo.nextCursor! }).page();
    expect(second.data).toHaveLength(1);
    expect(second.pageInfo).toMatchObject({ hasMore: false, nextCursor: null });
    expect(new Set([...first.data, ...second.data].map((d) => d.id)).size).toBe(3);
    const e = await rejection(c.documents.list({ limit: 101 }).page());
    expect(e).toBeInstanceOf(EsigInvalidRequestError);
    expect(e.errors[0]?.path).toBe('limit');
  });
});

describe('retries, through a proxy that fails on purpose', () => {
  let proxy: FailingProxy;
  let viaProxy: Esig;
  beforeAll(async () => {
    proxy = await startFailingProxy(s.url);
    viaProxy = new Esig({ apiKey: s.key, baseUrl: proxy.url });
  });
  afterAll(async () => proxy?.close());

  const isCreate = (m: string, p: string) => m === 'POST' && p === '/api/v1/signature-requests';
  const draftsTitled = async (title: string) => {
    const found = [];
    for await (const r of esig.signatureRequests.list({ status: 'DRAFT', limit: 100 })) if (r.title === title) found.push(r);
    return found;
  };

  it.each([
    ['a 503 before the server', { kind: 'status', status: 503, body: 'upstream unavailable' } as const],
    ['a connection dropped before the server', { kind: 'drop-before' } as const],
    ['a connection dropped after the server did the work', { kind: 'drop-after' } as const],
  ])('makes exactly one resource after %s, with one Idempotency-Key on both attempts', async (what, action) => {
    proxy.reset();
    const doc = await esig.documents.upload(await makePdf(1), { name: 'retry.pdf' });
    const title = `Retried after ${what}`;
    proxy.failNext(isCreate, action);
    const created = await viaProxy.signatureRequests.create({ title, documentIds: [doc.id] });
    const posts = proxy.log.filter((r) => isCreate(r.method, r.path));
    expect(posts.map((p) => p.action)).toEqual([action.kind, 'forward']);
    const keys = posts.map((p) => p.headers['idempotency-key']);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
    // Where the server had already made it, the retry got the stored answer.
    expect(posts[1]!.upstream!.headers['idempotency-replayed']).toBe(action.kind === 'drop-after' ? 'true' : undefined);
    if (action.kind === 'drop-after') expect(JSON.parse(posts[0]!.upstream!.body).id).toBe(created.id);
    expect((await draftsTitled(title)).map((r) => r.id)).toEqual([created.id]);
  });

  it('retries an upload whose connection dropped after the server stored it: one document', async () => {
    proxy.reset();
    proxy.failNext((m, p) => m === 'POST' && p.startsWith('/api/v1/documents?'), { kind: 'drop-after' });
    const name = `dropped-${Date.now()}.pdf`;
    const doc = await viaProxy.documents.upload(await makePdf(1), { name });
    const posts = proxy.log.filter((r) => r.method === 'POST');
    expect(posts).toHaveLength(2);
    expect(posts[1]!.headers['idempotency-key']).toBe(posts[0]!.headers['idempotency-key']);
    const named = [];
    for await (const d of esig.documents.list({ limit: 100 })) if (d.name === name) named.push(d.id);
    expect(named).toEqual([doc.id]);
  });

  it('retries 409 idempotency_in_progress with the same key, and gives up after maxRetries', async () => {
    proxy.reset();
    const doc = await esig.documents.upload(await makePdf(1), { name: 'in-progress.pdf' });
    // The server's own example of this answer, from the document it serves.
    const spec = (await s.call('GET', '/api/v1/openapi.json', { key: null })).body;
    const inProgress = spec.paths['/api/v1/signature-requests'].post.responses['409'].content['application/problem+json'].examples.idempotency_in_progress.value;
    const answer = { kind: 'status', status: 409, body: JSON.stringify(inProgress), headers: { 'content-type': 'application/problem+json' } } as const;
    proxy.failNext(isCreate, answer);
    const created = await viaProxy.signatureRequests.create({ title: 'After in-progress', documentIds: [doc.id] }, { idempotencyKey: 'in-progress-1' });
    expect(proxy.log.filter((r) => isCreate(r.method, r.path)).map((r) => [r.action, r.headers['idempotency-key']])).toEqual([
      ['status', 'in-progress-1'],
      ['forward', 'in-progress-1'],
    ]);
    expect(created.title).toBe('After in-progress');

    proxy.reset();
    for (let i = 0; i < 3; i++) proxy.failNext(isCreate, answer);
    const e = await rejection(viaProxy.signatureRequests.create({ title: 'Never', documentIds: [doc.id] }));
    expect(e).toBeInstanceOf(EsigIdempotencyError);
    expect(e.code).toBe('idempotency_in_progress');
    expect(proxy.log.filter((r) => isCreate(r.method, r.path))).toHaveLength(3); // 1 + maxRetries (2)
  });

  it('never retries another 4xx, and fails with the last error when retries run out', async () => {
    proxy.reset();
    const bad = await rejection(viaProxy.signatureRequests.create({ title: '', documentIds: [] }));
    expect(bad).toBeInstanceOf(EsigInvalidRequestError);
    expect(bad.errors.map((x) => x.path).sort()).toEqual(['documentIds', 'title']);
    expect(await rejection(viaProxy.documents.get(`doc_${'0'.repeat(26)}`))).toBeInstanceOf(EsigNotFoundError);
    expect(proxy.log).toHaveLength(2);

    proxy.reset();
    for (let i = 0; i < 2; i++) proxy.failNext((m) => m === 'GET', { kind: 'status', status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } });
    const once = new Esig({ apiKey: s.key, baseUrl: proxy.url, maxRetries: 1 });
    const e = await rejection(once.documents.list().page());
    expect(e).toBeInstanceOf(EsigAPIError);
    expect(e).toMatchObject({ status: 502, code: 'unexpected_response' });
    expect(proxy.log).toHaveLength(2);

    proxy.reset();
    proxy.failNext(() => true, { kind: 'drop-before' });
    const none = new Esig({ apiKey: s.key, baseUrl: proxy.url, maxRetries: 0 });
    const dropped = await rejection(none.documents.list().page());
    expect(dropped).toBeInstanceOf(EsigConnectionError);
    expect(dropped).toMatchObject({ status: 0, code: 'connection_error', requestId: null });
  });

  it('takes a 2xx that is not JSON for a fault, without retrying; an aborted call stops, retries included', async () => {
    proxy.reset();
    proxy.failNext((m) => m === 'GET', { kind: 'status', status: 200, body: '<html>captive portal</html>', headers: { 'content-type': 'text/html' } });
    const odd = await rejection(viaProxy.documents.list().page());
    expect(odd).toBeInstanceOf(EsigAPIError);
    expect(odd).toMatchObject({ status: 200, code: 'unexpected_response' });
    expect(proxy.log).toHaveLength(1);

    proxy.reset();
    proxy.failNext((m) => m === 'GET', { kind: 'status', status: 503, body: 'down' });
    // The 503 is retried after a backoff of at least 250 ms; the caller aborts during it.
    // The client's attempts are also recorded as it makes them: a retry despite the abort would be made by its
    // backoff timer (at most 500 ms, set before the wait below began), so it is recorded before that wait
    // ends however slow the machine, where the proxy might only see it later.
    const rec = recordingFetch(fetch);
    const watched = new Esig({ apiKey: s.key, baseUrl: proxy.url, fetch: rec.fetch });
    const controller = new AbortController();
    const aborted = watched.documents.list(undefined, { signal: controller.signal }).page();
    await until(async () => (proxy.log.length === 1 ? true : undefined), 'the first attempt');
    controller.abort(new Error('caller gave up'));
    await expect(aborted).rejects.toThrow('caller gave up');
    await new Promise((r) => setTimeout(r, 1100));
    expect(rec.attempts).toHaveLength(1);
    expect(proxy.log).toHaveLength(1);
  });

  it('times out an attempt that gets no answer, and retries it', async () => {
    proxy.reset();
    // A server that accepts the connection and never answers.
    const { createServer } = await import('node:http');
    const silent = createServer(() => undefined);
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', () => r()));
    const port = (silent.address() as { port: number }).port;
    const c = new Esig({ apiKey: s.key, baseUrl: `http://127.0.0.1:${port}`, timeoutMs: 300, maxRetries: 1 });
    const e = await rejection(c.documents.list().page());
    expect(e).toBeInstanceOf(EsigTimeoutError);
    expect(e.code).toBe('timeout');
    silent.closeAllConnections();
    silent.close();
  });
});

describe('rate limits', () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ ESIG_RATE_LIMIT_KEY: '2', ESIG_RATE_LIMIT_ORG: '100', ESIG_RATE_LIMIT_WINDOW_S: '2' });
  });
  afterAll(async () => limited?.close());

  it('waits Retry-After on a 429 and then succeeds; without retries the error carries retryAfter', async () => {
    const key = await limited.newKey('limited', 'test');
    const rec = recordingFetch(limited.fetch);
    const c = new Esig({ apiKey: key, baseUrl: limited.url, fetch: rec.fetch });
    await c.documents.list().page();
    await c.documents.list().page();
    const page = await c.documents.list().page();
    expect(page.data).toEqual([]);
    const statuses = rec.attempts.map((a) => a.status);
    expect(statuses.slice(0, 3)).toEqual([200, 200, 429]);
    expect(statuses.at(-1)).toBe(200);
    // Every retry came no sooner than the Retry-After of the 429 before it.
    for (let i = 2; i < rec.attempts.length - 1; i++) {
      const a = rec.attempts[i]!;
      expect(a.status).toBe(429);
      expect(Number(a.retryAfter)).toBeGreaterThan(0);
      expect(rec.attempts[i + 1]!.at - a.answeredAt!).toBeGreaterThanOrEqual(Number(a.retryAfter) * 1000 - 5);
    }

    const impatient = new Esig({ apiKey: key, baseUrl: limited.url, fetch: limited.fetch, maxRetries: 0 });
    await impatient.documents.list().page().catch(() => undefined);
    await impatient.documents.list().page().catch(() => undefined);
    const e = await rejection(impatient.documents.list().page());
    expect(e).toBeInstanceOf(EsigRateLimitError);
    expect(e).toMatchObject({ status: 429, code: 'rate_limited' });
    expect((e as EsigRateLimitError).retryAfter).toBeGreaterThan(0);
  }, 30_000);

  it('does not wait a Retry-After longer than maxRetryAfterMs', async () => {
    const key = await limited.newKey('limited-long', 'test');
    const rec = recordingFetch(limited.fetch);
    const c = new Esig({ apiKey: key, baseUrl: limited.url, fetch: rec.fetch, maxRetryAfterMs: 10 });
    await c.documents.list().page();
    await c.documents.list().page();
    expect(await rejection(c.documents.list().page())).toBeInstanceOf(EsigRateLimitError);
    expect(rec.attempts).toHaveLength(3);
  });
});

describe('every error code, as the server answers it', () => {
  const EXPECTED: Record<string, typeof EsigError> = {};

  it.each([
    ['validation_failed', 400, EsigInvalidRequestError, () => esig.signatureRequests.create({ title: '', documentIds: [] })],
    ['unauthenticated', 401, EsigAuthenticationError, () => new Esig({ apiKey: 'esig_test_nope', baseUrl: s.url, fetch: s.fetch }).documents.list().page()],
    ['insufficient_scope', 403, EsigPermissionError, async () => new Esig({ apiKey: await s.newKey('default', 'test', ['documents:read']), baseUrl: s.url, fetch: s.fetch }).signatureRequests.create({ title: 'x', documentIds: [] })],
    ['not_found', 404, EsigNotFoundError, () => esig.signatureRequests.get(`req_${'0'.repeat(26)}`)],
    ['invalid_state', 409, EsigInvalidStateError, async () => esig.signatureRequests.send((await esig.signatureRequests.create({ title: 'Empty', documentIds: [(await esig.documents.upload(await makePdf(1), { name: 'e.pdf' })).id] })).id)],
    ['idempotency_key_reused', 422, EsigIdempotencyError, async () => {
      const doc = await esig.documents.upload(await makePdf(1), { name: 'reuse.pdf' });
      await esig.signatureRequests.create({ title: 'First', documentIds: [doc.id] }, { idempotencyKey: `reuse-${doc.id}` });
      return esig.signatureRequests.create({ title: 'Second', documentIds: [doc.id] }, { idempotencyKey: `reuse-${doc.id}` });
    }],
    ['payload_too_large', 413, EsigInvalidRequestError, () => esig.documents.upload(new Uint8Array(300 * 1024).fill(37), { name: 'big.pdf' })],
    ['unsupported_media_type', 415, EsigInvalidRequestError, () => esig.request({ method: 'POST', path: '/api/v1/signature-requests', bytes: { data: new TextEncoder().encode('title=x'), contentType: 'text/plain' } })],
    ['invalid_document', 422, EsigInvalidRequestError, async () => esig.documents.upload(await makeEncryptedPdf(), { name: 'locked.pdf' })],
    ['request_timeout', 408, EsigInvalidRequestError, () => {
      // A body that stops arriving half-way: the server gives up after ESIG_BODY_TIMEOUT_S.
      const stalling: FetchLike = (url, init) => {
        const bytes = init.body as Uint8Array;
        const body = new ReadableStream<Uint8Array>({ start: (c) => c.enqueue(bytes.subarray(0, 10)) });
        return s.fetch(url, { ...init, body, duplex: 'half' } as RequestInit);
      };
      return new Esig({ apiKey: s.key, baseUrl: s.url, fetch: stalling, maxRetries: 0 }).documents.upload(new Uint8Array(1000), { name: 'slow.pdf' });
    }],
    ['server_busy', 503, EsigAPIError, async () => {
      // Four uploads sent without a length hold what one organization in one mode may hold by default, half of the
      // budget of 8 × ESIG_MAX_UPLOAD_BYTES, until they end.
      const held = await Promise.all(Array.from({ length: 4 }, () => s.holdUpload('chunked')));
      try {
        return await new Esig({ apiKey: s.key, baseUrl: s.url, fetch: s.fetch, maxRetries: 0 }).documents.upload(await makePdf(1), { name: 'busy.pdf' });
      } finally {
        await Promise.all(held.map((h) => h.finish()));
      }
    }],
  ] as const)('%s → %i', async (code, status, family, make) => {
    const e = await rejection(make() as Promise<unknown>);
    expect(e).toBeInstanceOf(family);
    expect(e).toMatchObject({ status, code, requestId: expect.stringMatching(/^log_/) });
    expect(e.detail.length).toBeGreaterThan(0);
    EXPECTED[code] = family;
  });

  it('500 internal: a stored response the master key cannot open, retried and then thrown as EsigAPIError', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'esig-client-500-'));
    const env = (masterKey: string) =>
      loadConfig({ ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error', ESIG_MASTER_KEY: masterKey });
    try {
      const first = await startServer(env('a'.repeat(64)), () => undefined);
      const key = (first.bootstrap ?? (await createKey(first.container, { orgName: 'default', mode: 'test', scopes: ['*'], name: 'k' }))).secret;
      await new Esig({ apiKey: key, baseUrl: first.url }).apiKeys.create({ name: 'once', scopes: ['documents:read'] }, { idempotencyKey: 'sealed-1' });
      await first.close();

      const second = await startServer(env('b'.repeat(64)), () => undefined);
      try {
        const rec = recordingFetch(fetch);
        const e = await rejection(new Esig({ apiKey: key, baseUrl: second.url, fetch: rec.fetch }).apiKeys.create({ name: 'once', scopes: ['documents:read'] }, { idempotencyKey: 'sealed-1' }));
        expect(e).toBeInstanceOf(EsigAPIError);
        expect(e).toMatchObject({ status: 500, code: 'internal', requestId: expect.stringMatching(/^log_/) });
        expect(rec.attempts.map((a) => [a.status, a.headers.get('idempotency-key')])).toEqual([[500, 'sealed-1'], [500, 'sealed-1'], [500, 'sealed-1']]);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('covers every code the API has except mail_unavailable, which only the signer API answers', () => {
    const all = Object.keys(PROBLEMS).sort();
    expect([...Object.keys(EXPECTED), 'internal', 'rate_limited', 'idempotency_in_progress', 'mail_unavailable'].sort()).toEqual(all);
  });
});
