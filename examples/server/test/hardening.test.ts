// An outside security review's findings, each as the attack that worked against the running server. Every
// test here failed before its fix.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { createTestDatabase, postgresAvailable } from './pg.js';

const pgAvailable = await postgresAvailable('the PostgreSQL boundary test');
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost', ESIG_BODY_TIMEOUT_S: '2', ESIG_WORKER_POLL_MS: '50', ESIG_PUBLIC_URL: 'http://esig.test' });
});
afterAll(async () => s.close());

const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number, code: string) => {
  expect(r.status, JSON.stringify(r.body)).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(r.body).toMatchObject({ status, code });
};

let n = 0;
const idem = () => `hardening-${process.pid}-${n++}`;
const databaseBytes = (dir: string) =>
  Buffer.concat(
    ['esig.db', 'esig.db-wal'].map((f) => {
      try {
        return readFileSync(join(dir, f));
      } catch {
        return Buffer.alloc(0);
      }
    }),
  );
const webhookUrl = 'https://localhost:9/esig';

describe('1. authorization is decided before an idempotent replay, and scope before the body', () => {
  it('a read-only key repeating another key’s Idempotency-Key on POST /api-keys gets 403, never the stored secret', async () => {
    const key = idem();
    const first = await s.call('POST', '/api/v1/api-keys', { body: { name: 'admin-2', scopes: ['*'] }, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const reader = await s.newKey('default', 'test', ['documents:read']);
    const replay = await s.call('POST', '/api/v1/api-keys', { key: reader, body: { name: 'admin-2', scopes: ['*'] }, headers: { 'idempotency-key': key } });
    expectProblem(replay, 403, 'insufficient_scope');
    expect(replay.text).not.toContain(first.body.secret);
  });

  it('another key with the route’s scope cannot replay a response it did not cause', async () => {
    const key = idem();
    const first = await s.call('POST', '/api/v1/api-keys', { body: { name: 'minted', scopes: ['documents:read'] }, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const other = await s.newKey('default', 'test', ['api_keys:write', 'documents:read']);
    const replay = await s.call('POST', '/api/v1/api-keys', { key: other, body: { name: 'minted', scopes: ['documents:read'] }, headers: { 'idempotency-key': key } });
    expectProblem(replay, 422, 'idempotency_key_reused');
    expect(replay.text).not.toContain(first.body.secret);
    // The caller that made it still gets its replay.
    const own = await s.call('POST', '/api/v1/api-keys', { body: { name: 'minted', scopes: ['documents:read'] }, headers: { 'idempotency-key': key } });
    expect(own.status).toBe(201);
    expect(own.headers.get('idempotency-replayed')).toBe('true');
    expect(own.body.secret).toBe(first.body.secret);
  });

  it('rotate-secret does not leak a webhook secret to a key without webhooks:write', async () => {
    const ep = await s.call('POST', '/api/v1/webhooks/endpoints', { body: { url: webhookUrl, events: ['request.completed'] } });
    expect(ep.status).toBe(201);
    const key = idem();
    const rotated = await s.call('POST', `/api/v1/webhooks/endpoints/${ep.body.id}/rotate-secret`, { headers: { 'idempotency-key': key } });
    expect(rotated.status).toBe(200);
    const reader = await s.newKey('default', 'test', ['webhooks:read']);
    const replay = await s.call('POST', `/api/v1/webhooks/endpoints/${ep.body.id}/rotate-secret`, { key: reader, headers: { 'idempotency-key': key } });
    expectProblem(replay, 403, 'insufficient_scope');
    expect(replay.text).not.toContain(rotated.body.secret);
  });

  it('a caller without the scope gets 403, not a 400 describing the body', async () => {
    const reader = await s.newKey('default', 'test', ['documents:read']);
    const r = await s.call('POST', '/api/v1/signature-requests', { key: reader, body: { titel: 42 } });
    expectProblem(r, 403, 'insufficient_scope');
    expect(r.body.errors).toBeUndefined();
    const upload = await s.call('POST', '/api/v1/documents', { key: reader, raw: { bytes: 'not a pdf', contentType: 'text/plain' } });
    expectProblem(upload, 403, 'insufficient_scope');
  });
});

/** Sends headers and a first slice of a large body, then waits for the server's answer without sending the rest. */
const partialUpload = (headers: Record<string, string>, declared: number, sent: number, path = '/api/v1/documents?name=big.pdf') =>
  new Promise<{ status: number; body: string }>((resolve, reject) => {
    const url = new URL(s.url);
    const req = http.request({ host: url.hostname, port: url.port, method: 'POST', path, headers: { 'content-type': 'application/pdf', 'content-length': String(declared), ...headers } });
    req.on('response', (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => {
        resolve({ status: res.statusCode!, body });
        req.destroy();
      });
    });
    req.on('error', reject);
    req.write(Buffer.alloc(sent, 0x25));
  });

describe('5. nothing reads a body before authentication, scope and rate limit; bodies have a read timeout', () => {
  it('answers 401 to an upload without a key while its body is still on the way', async () => {
    const r = await partialUpload({}, 24 * 1024 * 1024, 1024);
    expect(r.status).toBe(401);
    expect(JSON.parse(r.body).code).toBe('unauthenticated');
  });

  it('answers 403 to an upload by a key without documents:write before reading the body', async () => {
    const reader = await s.newKey('default', 'test', ['documents:read']);
    const r = await partialUpload({ authorization: `Bearer ${reader}` }, 24 * 1024 * 1024, 1024);
    expect(r.status).toBe(403);
  });

  it('cuts off a body that trickles in slower than the read timeout with 408', async () => {
    const r = await partialUpload({ authorization: `Bearer ${s.key}` }, 1024 * 1024, 1024);
    expect(r.status).toBe(408);
    expect(JSON.parse(r.body).code).toBe('request_timeout');
  });

  it('cuts off a trickling body at the OAuth endpoints too, which anyone may call (they waited for the server’s own 5-minute timeout)', async () => {
    for (const [path, type] of [['/oauth/token', 'application/x-www-form-urlencoded'], ['/oauth/register', 'application/json'], ['/oauth/revoke', 'application/json']] as const) {
      const r = await partialUpload({ 'content-type': type }, 4096, 16, path);
      // esig's own answer (the read timeout is 2 s here): Node's, after 300 s, is a bare 408 with no body. In the
      // shape of every OAuth error (RFC 6749), the contract's one exception to problem+json.
      expect([path, r.status]).toEqual([path, 408]);
      expect(JSON.parse(r.body)).toEqual({ error: 'invalid_request', error_description: 'The request body did not arrive within 2 s.' });
    }
  });
});

describe('6. no secret rests in clear in the database, idempotency records included', () => {
  it('keeps neither minted API key secrets nor webhook secrets in clear, and still replays them to their caller', async () => {
    const keyA = idem();
    const minted = await s.call('POST', '/api/v1/api-keys', { body: { name: 'at-rest', scopes: ['documents:read'] }, headers: { 'idempotency-key': keyA } });
    const keyB = idem();
    const ep = await s.call('POST', '/api/v1/webhooks/endpoints', { body: { url: webhookUrl, events: ['request.completed'] }, headers: { 'idempotency-key': keyB } });
    const keyC = idem();
    const rotated = await s.call('POST', `/api/v1/webhooks/endpoints/${ep.body.id}/rotate-secret`, { headers: { 'idempotency-key': keyC } });
    expect([minted.status, ep.status, rotated.status]).toEqual([201, 201, 200]);
    const db = databaseBytes(s.dir);
    for (const secret of [minted.body.secret, ep.body.secret, rotated.body.secret]) {
      expect(db.includes(Buffer.from(secret))).toBe(false);
      // Nor a part of it long enough to matter (the records must not hold it in any encoding we write).
      expect(db.includes(Buffer.from(secret.slice(-24)))).toBe(false);
    }
    const replay = await s.call('POST', '/api/v1/api-keys', { body: { name: 'at-rest', scopes: ['documents:read'] }, headers: { 'idempotency-key': keyA } });
    expect(replay.headers.get('idempotency-replayed')).toBe('true');
    expect(replay.body.secret).toBe(minted.body.secret);
  });
});

/** A sent request with one signer (an address of its own) and the signer's token from the test mailbox. */
const sentWithLink = async () => {
  const doc = await s.uploadPdf('linked.pdf', 1);
  const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Linked', documentIds: [doc.id] } })).body;
  const email = `signer.${req.id.slice(-10).toLowerCase()}@example.com`;
  const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'Ada', lastName: 'L' } })).body;
  await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
  expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {} })).status).toBe(200);
  return { req, rcp, token: await s.signingToken(email) };
};
const signerCall = (token: string, method: string, action = '', body?: unknown) =>
  s.call(method, `/api/v1/signing/${token}${action}`, { key: null, body });

describe('7. after a request ends, a signing link shows only its final state', () => {
  it('after cancel: no fields, no documents, no original PDF', async () => {
    const { req, token } = await sentWithLink();
    const before = await signerCall(token, 'GET');
    expect(before.body.fields.length).toBeGreaterThan(0);
    const docId = before.body.documents[0].id;
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/cancel`, { body: {} })).status).toBe(200);
    const after = await signerCall(token, 'GET');
    expect(after.status).toBe(200);
    expect(after.body.request.status).toBe('CANCELLED');
    expect(after.body.fields).toEqual([]);
    expect(after.body.documents).toEqual([]);
    const pdf = await signerCall(token, 'GET', `/documents/${docId}`);
    expectProblem(pdf, 409, 'invalid_state');
  });

  it('after expiry: no fields, no documents, no original PDF', async () => {
    const doc = await s.uploadPdf('expiring.pdf', 1);
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Expiring', documentIds: [doc.id], expiresAt } })).body;
    const email = `exp.${req.id.slice(-10).toLowerCase()}@example.com`;
    const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'E', lastName: 'X' } })).body;
    await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {} })).status).toBe(200);
    const token = await s.signingToken(email);
    for (let i = 0; i < 400; i++) {
      if ((await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status === 'EXPIRED') break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const after = await signerCall(token, 'GET');
    expect(after.body.request.status).toBe('EXPIRED');
    expect(after.body.fields).toEqual([]);
    expect(after.body.documents).toEqual([]);
    expectProblem(await signerCall(token, 'GET', `/documents/${doc.id}`), 409, 'invalid_state');
  });
});

describe('8. a narrower key cannot revoke a stronger one', () => {
  it('a key with api_keys:write cannot revoke a key whose scopes are not a subset of its own', async () => {
    const admin = await s.call('POST', '/api/v1/api-keys', { body: { name: 'strong', scopes: ['*'] } });
    const narrow = await s.newKey('default', 'test', ['api_keys:write']);
    const r = await s.call('DELETE', `/api/v1/api-keys/${admin.body.id}`, { key: narrow });
    expectProblem(r, 403, 'insufficient_scope');
    expect((await s.call('GET', '/api/v1/documents', { key: admin.body.secret })).status).toBe(200);
    // A key it could have minted, it may revoke.
    const weak = await s.call('POST', '/api/v1/api-keys', { key: narrow, body: { name: 'weak', scopes: ['api_keys:write'] } });
    expect((await s.call('DELETE', `/api/v1/api-keys/${weak.body.id}`, { key: narrow })).status).toBe(200);
  });
});

const badStrings: Array<[string, string]> = [
  ['NUL', 'a\u0000b'],
  ['a lone high surrogate', 'a\ud800b'],
  ['a lone low surrogate', 'a\udc00b'],
];

/** Requests that carry a string from the client to the store, each with one poisoned string. */
const poisoned = (server: TestServer) => async (bad: string) => {
  const docId = async () => (await server.uploadPdf('p.pdf', 1)).id;
  const draft = (await server.call('POST', '/api/v1/signature-requests', { body: { title: 'ok', documentIds: [await docId()] } })).body;
  return [
    async () => server.call('POST', '/api/v1/signature-requests', { body: { title: bad, documentIds: [await docId()] } }),
    async () => server.call('POST', '/api/v1/signature-requests', { body: { title: 't', message: bad, documentIds: [await docId()] } }),
    async () => server.call('POST', '/api/v1/signature-requests', { body: { title: 'ok', documentIds: [await docId()], [bad]: 1 } }),
    () => server.call('POST', `/api/v1/signature-requests/${draft.id}/recipients`, { body: { email: 'a@example.com', firstName: bad, lastName: 'x' } }),
    () => server.call('POST', '/api/v1/api-keys', { body: { name: bad, scopes: ['documents:read'] } }),
    () => server.call('POST', '/api/v1/webhooks/endpoints', { body: { url: webhookUrl, events: ['request.completed'], description: bad } }),
    // URLs and multipart fields carry UTF-8: a lone surrogate cannot be encoded into either (the client sends
    // U+FFFD), so they are tried with NUL.
    ...(bad.includes('\u0000')
      ? [
          async () => {
            const form = new FormData();
            form.set('file', new Blob([await makePdf(1)], { type: 'application/pdf' }), 'p.pdf');
            form.set('name', bad);
            return server.call('POST', '/api/v1/documents', { form });
          },
          () => server.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(bad)}`),
          () => server.call('GET', `/api/v1/webhooks/deliveries?eventId=${encodeURIComponent(bad)}`),
          async () => server.call('POST', `/api/v1/documents?name=${encodeURIComponent(bad)}`, { raw: { bytes: await makePdf(1), contentType: 'application/pdf' } }),
        ]
      : []),
  ];
};

const checkPoisoned = async (server: TestServer) => {
  for (const [, bad] of badStrings)
    for (const call of await poisoned(server)(bad)) {
      const r = await call();
      expectProblem(r, 400, 'validation_failed');
    }
};

describe('9. NUL and lone surrogates are refused at the boundary', () => {
  it('on SQLite', async () => checkPoisoned(s));

  it('in a signer’s decline reason', async () => {
    const { token } = await sentWithLink();
    for (const [, bad] of badStrings) expectProblem(await signerCall(token, 'POST', '/decline', { reason: bad }), 400, 'validation_failed');
  });

  describe.skipIf(!pgAvailable)('on PostgreSQL', () => {
    let pgs: TestServer;
    let db: Awaited<ReturnType<typeof createTestDatabase>>;
    beforeAll(async () => {
      db = await createTestDatabase('esig_hardening');
      pgs = await startTestServer({ ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost', ESIG_DATABASE_URL: db.url, ESIG_MASTER_KEY: randomBytes(32).toString('hex'), ESIG_WORKERS: 'none' });
    });
    afterAll(async () => {
      await pgs?.close();
      await db?.drop();
    });
    it('answers 400, never 500', async () => checkPoisoned(pgs));

    it('a client_id with NUL is an unknown client at the OAuth endpoints (it was a 500 on /oauth/token, from the lookup)', async () => {
      const token = await fetch(`${pgs.url}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'grant_type=authorization_code&client_id=%00&code=x&code_verifier=y&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb',
      });
      expect([token.status, ((await token.json()) as { error?: string }).error]).toEqual([401, 'invalid_client']);
      const authorize = await fetch(`${pgs.url}/oauth/authorize?response_type=code&client_id=%00&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb&code_challenge=${'a'.repeat(43)}&code_challenge_method=S256`);
      expect(authorize.status).toBe(400);
      expect(await authorize.text()).toContain('unknown');
    });
  });
});

describe('10. malformed multipart is a 400, and a 401 without a key', () => {
  const multipart = (body: string, contentType: string, key: string | null = s.key) =>
    s.call('POST', '/api/v1/documents', { key, raw: { bytes: body, contentType } });
  it.each([
    ['no boundary', 'multipart/form-data', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4\r\n--x--\r\n'],
    ['a truncated body', 'multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4'],
    ['a garbage body', 'multipart/form-data; boundary=x', 'garbage'],
  ])('%s', async (_what, contentType, body) => {
    expectProblem(await multipart(body, contentType), 400, 'validation_failed');
    expectProblem(await multipart(body, contentType, null), 401, 'unauthenticated');
  });
});

describe('11. signing tokens never reach a log line; lines carry the route pattern', () => {
  it('redacts the token of /sign/{token} and of the signer API', async () => {
    const logged = await startTestServer({ ESIG_LOG_LEVEL: 'info', ESIG_WORKER_POLL_MS: '50', ESIG_PUBLIC_URL: 'http://esig.test' });
    const lines: string[] = [];
    // The logger writes whatever a turn of the event loop logged in one chunk: count lines, not chunks.
    const requestLines = () => lines.join('').split('\n').filter((l) => l.includes('"msg":"request"'));
    const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    try {
      const token = 'A'.repeat(43);
      await fetch(`${logged.url}/sign/${token}`);
      await logged.call('GET', `/api/v1/signing/${token}`, { key: null });
      await logged.call('POST', `/api/v1/signing/${token}/view`, { key: null, body: {} });
      // A request's line is written after its response has gone out, a turn or more after the client has it:
      // keep listening until the three requests' lines are in. The deadline only bounds how long a logger
      // that never writes them is waited for.
      const ours = () => requestLines().filter((l) => l.includes('"path":"/sign/') || l.includes('"path":"/api/v1/signing/'));
      for (const end = Date.now() + 20_000; ours().length < 3 && Date.now() < end; )
        await new Promise((r) => setTimeout(r, 10));
    } finally {
      spy.mockRestore();
    }
    const requests = requestLines();
    expect(requests.length).toBeGreaterThanOrEqual(3);
    expect(lines.join('')).not.toContain('A'.repeat(43));
    expect(requests.some((l) => l.includes('/api/v1/signing/{token}/view'))).toBe(true);
    expect(requests.some((l) => l.includes('/sign/{token}'))).toBe(true);
    await logged.close();
  });
});

describe('12. one-time codes: per-recipient limit, masked address, a lock-out the real signer can lift', () => {
  const otpRequest = async () => {
    const doc = await s.uploadPdf('otp.pdf', 1);
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'OTP', documentIds: [doc.id] } })).body;
    const email = `otp.${req.id.slice(-8).toLowerCase()}@example.com`;
    const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'O', lastName: 'T', authentication: 'email_otp' } })).body;
    await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {} })).status).toBe(200);
    return { req, rcp, email, token: await s.signingToken(email) };
  };
  const codes = async (email: string) =>
    ((await s.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(email)}&limit=100`)).body.data as Array<{ subject: string; text: string }>)
      .filter((m) => /code/i.test(m.subject))
      .map((m) => /\b(\d{6})\b/.exec(m.text)![1]!);

  it('sends at most 3 codes per 10 minutes to a recipient, then 429 with Retry-After', async () => {
    const { token, email } = await otpRequest();
    for (let i = 0; i < 3; i++) expect((await signerCall(token, 'POST', '/otp', {})).status).toBe(202);
    const fourth = await signerCall(token, 'POST', '/otp', {});
    expectProblem(fourth, 429, 'rate_limited');
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await codes(email)).toHaveLength(3);
  });

  it('shows only a masked address before identification', async () => {
    const { token, email } = await otpRequest();
    const view = await signerCall(token, 'GET');
    expect(view.text).not.toContain(email);
    expect(view.body.recipient.email).toMatch(/…@example\.com$/);
  });

  it('a new code sent to the address lifts the lock-out after 5 wrong codes', async () => {
    const { token, email } = await otpRequest();
    expect((await signerCall(token, 'POST', '/otp', {})).status).toBe(202);
    for (let i = 0; i < 5; i++) await signerCall(token, 'POST', '/authenticate', { code: '000000' === (await codes(email))[0] ? '111111' : '000000' });
    expect((await signerCall(token, 'GET')).body.recipient.locked).toBe(true);
    expect((await signerCall(token, 'POST', '/otp', {})).status).toBe(202);
    const latest = (await codes(email))[0]!;
    const ok = await signerCall(token, 'POST', '/authenticate', { code: latest });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.recipient.authenticated).toBe(true);
  });
});

describe('13. a recipient address is one mailbox, checked by a real validator', () => {
  it.each(['a,b@example.com', '"Ada" <ada@example.com>', 'Ada <ada@example.com>', 'ada@example.com, eve@evil.example', 'ada@example.com\r\nBcc: eve@evil.example', 'ada@@example.com', 'ada@example', 'ada @example.com'])(
    'refuses %j',
    async (email) => {
      const { req } = await s.draftReady();
      expectProblem(await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'A', lastName: 'B' } }), 400, 'validation_failed');
    },
  );
  it('accepts ordinary addresses', async () => {
    const { req } = await s.draftReady();
    for (const email of ['ada.lovelace+esig@example.co.uk', 'o\'brien@example.com'])
      expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'A', lastName: 'B' } })).status).toBe(201);
  });
});

describe('14. HSTS when the public URL is https', () => {
  it('sends Strict-Transport-Security with an https public URL, and not without', async () => {
    const tls = await startTestServer({ ESIG_PUBLIC_URL: 'https://esig.example.com', ESIG_WORKERS: 'none' });
    try {
      const r = await tls.call('GET', '/api/v1/documents');
      expect(r.headers.get('strict-transport-security')).toMatch(/^max-age=\d{7,}/);
      expect((await fetch(`${tls.url}/healthz`)).headers.get('strict-transport-security')).toMatch(/^max-age=/);
    } finally {
      await tls.close();
    }
    expect((await s.call('GET', '/api/v1/documents')).headers.get('strict-transport-security')).toBeNull();
  });
});

describe('16. small boundary holes', () => {
  it('the bearer scheme is case-insensitive', async () => {
    for (const scheme of ['bearer', 'BEARER', 'BeArEr'])
      expect((await s.call('GET', '/api/v1/documents', { key: null, headers: { authorization: `${scheme} ${s.key}` } })).status).toBe(200);
  });

  it('an impossible date is refused, not moved', async () => {
    const doc = await s.uploadPdf();
    for (const expiresAt of ['2027-02-30T00:00:00Z', '2027-13-01T00:00:00Z', '2027-04-31T12:00:00+02:00', '2027-01-01T24:30:00Z'])
      expectProblem(await s.call('POST', '/api/v1/signature-requests', { body: { title: 'd', documentIds: [doc.id], expiresAt } }), 400, 'validation_failed');
  });

  it('a webhook URL with control characters is refused', async () => {
    for (const url of ['https://localhost:9/a\u0000b', 'https://localhost:9/a\tb', 'https://local\nhost:9/', 'https://localhost:9/\u007f'])
      expectProblem(await s.call('POST', '/api/v1/webhooks/endpoints', { body: { url, events: ['request.completed'] } }), 400, 'validation_failed');
  });

  it('__proto__ among sign values is refused like any unknown field id', async () => {
    const { token } = await sentWithLink();
    const view = await signerCall(token, 'GET');
    const values = JSON.parse(`{"__proto__": "x", ${view.body.fields.map((f: { id: string }) => `"${f.id}": true`).join(',')}}`);
    const r = await s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body: JSON.stringify({ values, signature: { kind: 'typed', value: 'Ada' } }) });
    expectProblem(r, 400, 'validation_failed');
    expect(JSON.stringify(r.body.errors)).toContain('__proto__');
  });

  it('a JSON body with a __proto__ key reaches no prototype', async () => {
    const doc = await s.uploadPdf();
    const r = await s.call('POST', '/api/v1/signature-requests', { body: `{"title":"p","documentIds":["${doc.id}"],"__proto__":{"signingOrder":"sequential"}}` });
    expectProblem(r, 400, 'validation_failed');
  });
});

it('uploads a real PDF after all this (the harness still works)', async () => {
  const r = await s.call('POST', '/api/v1/documents?name=ok.pdf', { raw: { bytes: await makePdf(1), contentType: 'application/pdf' } });
  expect(r.status).toBe(201);
});
