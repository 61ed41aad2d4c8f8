import { createHash, randomBytes } from 'node:crypto';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { freePort, startTestServer } from './harness.js';

const b64url = (b: Buffer) => b.toString('base64url');
const REDIRECT = 'http://127.0.0.1:7777/callback';
const form = (o: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString() });

let s: TestServer;
let accessToken: string;
let requestId: string;

/** A PDF of about `mb` MiB: one page, and random bytes (they do not compress) in a stream the page refers to. */
const largePdf = async (mb: number) => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([612, 792]);
  page.drawText('A large agreement', { x: 72, y: 720, size: 14, font });
  page.node.set(PDFName.of('PieceInfo'), doc.context.register(doc.context.stream(randomBytes(mb * 1024 * 1024), {})));
  return doc.save();
};

beforeAll(async () => {
  const port = await freePort();
  s = await startTestServer({
    ESIG_PORT: String(port),
    ESIG_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ESIG_WORKER_POLL_MS: '50',
    // Fifty tool calls at once, each one API call.
    ESIG_RATE_LIMIT_KEY: '100000',
    ESIG_RATE_LIMIT_ADDRESS: '100000',
  });
  // A completed request whose finished PDF is about 8 MiB (11 Mi characters of base64).
  const up = await s.call('POST', '/api/v1/documents?name=large.pdf', { raw: { bytes: await largePdf(8), contentType: 'application/pdf' } });
  expect(up.status).toBe(201);
  const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Large', documentIds: [up.body.id] } })).body;
  const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' } })).body;
  await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: up.body.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
  expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  const token = await s.signingToken('ada@example.com');
  const signer = (action: string, body?: unknown) =>
    s.call(body === undefined ? 'GET' : 'POST', `/api/v1/signing/${token}${action}`, { key: null, body, headers: { 'user-agent': 'SignerBrowser/1.0' } });
  await signer('');
  await signer('/view', {});
  expect((await signer('/sign', { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } })).status).toBe(200);
  for (let i = 0; i < 300 && (await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body.status !== 'COMPLETED'; i++) await new Promise((ok) => setTimeout(ok, 100));
  requestId = req.id;
  // An agent of the same organization.
  const resource = `${s.url}/mcp`;
  const client = (await (await fetch(`${s.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Agent', redirect_uris: [REDIRECT] }) })).json()) as { client_id: string };
  const verifier = b64url(randomBytes(32));
  const consent = { client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT, code_challenge: b64url(createHash('sha256').update(verifier).digest()), code_challenge_method: 'S256', resource };
  const post = await fetch(`${s.url}/oauth/authorize`, { ...form({ ...consent, api_key: s.key, decision: 'allow' }), redirect: 'manual' });
  const code = new URL(post.headers.get('location')!).searchParams.get('code')!;
  accessToken = ((await (await fetch(`${s.url}/oauth/token`, form({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: client.client_id, redirect_uri: REDIRECT, resource }))).json()) as { access_token: string }).access_token;
}, 120_000);

afterAll(async () => {
  await s?.close();
}, 30_000);

type Answer = { id: number; result: { isError?: boolean; content: Array<{ type: string; text?: string; resource?: { blob: string } }> } };

// The transport writes a body's answers as one JSON string, and a V8 string stops at 2^29 - 24 characters (about
// 512 Mi). Fifty finished PDFs of 8 MiB are 560 Mi characters of base64: JSON.stringify threw inside the transport's
// send, which the protocol server only reports, and the call was never answered (what its body reserved from the
// HTTP adapter's budget held for good, a pending entry kept with its request and response).
describe('the PDFs of one request’s answers', () => {
  it('a batch whose PDFs are more than a string can hold is answered: those past the bound are too_large', async () => {
    const batch = Array.from({ length: 50 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'get_finished_document', arguments: { requestId } } }));
    const r = await fetch(`${s.url}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(batch),
      signal: AbortSignal.timeout(90_000),
    });
    expect(r.status).toBe(200);
    const answers = (await r.json()) as Answer[];
    expect(answers).toHaveLength(50);
    const pdfs = answers.filter((a) => a.result.content[0]!.type === 'resource');
    const refused = answers.filter((a) => a.result.isError);
    expect(pdfs.length + refused.length).toBe(50);
    expect(pdfs.length).toBeGreaterThan(0);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.result.content[0]!.text).toMatch(/^too_large: /);
    expect(pdfs.reduce((n, a) => n + a.result.content[0]!.resource!.blob.length, 0)).toBeLessThanOrEqual(256 * 1024 * 1024);
  }, 120_000);
});
