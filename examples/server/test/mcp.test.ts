import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HttpsReceiver } from '@esig/testkit/https-receiver';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { makePdf } from '@esig/testkit/pdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { freePort, startTestServer } from './harness.js';
import { T } from '../src/tokens.js';


const b64url = (b: Buffer) => b.toString('base64url');
const pkce = () => {
  const verifier = b64url(randomBytes(32));
  return { verifier, challenge: b64url(createHash('sha256').update(verifier).digest()) };
};

const REDIRECT = 'http://127.0.0.1:7777/callback';

let s: TestServer;
let rx: HttpsReceiver;
let resource: string;

beforeAll(async () => {
  rx = await startHttpsReceiver();
  const port = await freePort();
  s = await startTestServer({
    ESIG_PORT: String(port),
    ESIG_PUBLIC_URL: `http://127.0.0.1:${port}`,
    ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
    ESIG_WEBHOOK_CA_FILE: rx.certFile,
    ESIG_RATE_LIMIT_KEY: '40',
    // The OAuth flows of this file all come from one address.
    ESIG_RATE_LIMIT_ADDRESS: '100000',
  });
  resource = `${s.url}/mcp`;
}, 60_000);

afterAll(async () => {
  await s?.close();
  await rx?.close();
}, 30_000);

const form = (o: Record<string, string>) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(o).toString() });

const register = async (redirectUris = [REDIRECT]) => {
  const r = await fetch(`${s.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Test agent', redirect_uris: redirectUris }) });
  return { status: r.status, body: (await r.json()) as { client_id: string; error?: string } };
};

/** The consent step as a browser does it: GET the page, POST the form with the key. Returns the redirect. */
const authorize = async (clientId: string, o: { key?: string; scope?: string; challenge?: string; method?: string; resource?: string; redirect?: string; decision?: string } = {}) => {
  const p = pkce();
  const params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: o.redirect ?? REDIRECT,
    code_challenge: o.challenge ?? p.challenge,
    code_challenge_method: o.method ?? 'S256',
    resource: o.resource ?? resource,
    state: 'st4te',
    ...(o.scope ? { scope: o.scope } : {}),
  };
  const page = await fetch(`${s.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
  const html = await page.text();
  if (page.status !== 200) return { page, html, location: page.headers.get('location'), verifier: p.verifier };
  const post = await fetch(`${s.url}/oauth/authorize`, { ...form({ ...params, api_key: o.key ?? s.key, decision: o.decision ?? 'allow' }), redirect: 'manual' });
  return { page, html, post, location: post.headers.get('location'), verifier: p.verifier };
};

const token = async (body: Record<string, string>) => {
  const r = await fetch(`${s.url}/oauth/token`, form(body));
  return { status: r.status, body: (await r.json()) as { access_token: string; refresh_token: string; scope: string; error?: string } };
};

/** The whole flow for a fresh client: registration, consent, code exchange. */
const connectAgent = async (o: { key?: string; scope?: string } = {}) => {
  const { body: c } = await register();
  const a = await authorize(c.client_id, o);
  const code = new URL(a.location!).searchParams.get('code')!;
  const t = await token({ grant_type: 'authorization_code', code, code_verifier: a.verifier, client_id: c.client_id, redirect_uri: REDIRECT, resource });
  expect(t.status).toBe(200);
  return { clientId: c.client_id, ...t.body };
};

const mcpClient = async (accessToken: string) => {
  const client = new Client({ name: 'esig-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(resource), { requestInit: { headers: { Authorization: `Bearer ${accessToken}` } } }));
  return client;
};

const rpc = (accessToken: string | null, body: unknown, headers: Record<string, string> = {}) =>
  fetch(resource, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(accessToken ? { authorization: `Bearer ${accessToken}` } : {}), ...headers },
    body: JSON.stringify(body),
  });

describe('OAuth discovery and registration', () => {
  it('publishes protected-resource and authorization-server metadata', async () => {
    const prm = await (await fetch(`${s.url}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm).toMatchObject({ resource, authorization_servers: [s.url] });
    const as = await (await fetch(`${s.url}/.well-known/oauth-authorization-server`)).json();
    expect(as).toMatchObject({
      issuer: s.url,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
      token_endpoint: `${s.url}/oauth/token`,
      registration_endpoint: `${s.url}/oauth/register`,
    });
  });

  it('a body that is not JSON, or JSON but not an object, is an OAuth error, not problem+json', async () => {
    for (const [path, body, error] of [
      ['/oauth/register', 'null', 'invalid_client_metadata'],
      ['/oauth/register', '{"client_name": ', 'invalid_client_metadata'],
      ['/oauth/token', '[', 'invalid_request'],
    ] as const) {
      const r = await fetch(`${s.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      expect(r.status, `${path} ${body}`).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await r.json()).toMatchObject({ error });
    }
  });

  it('refuses a registration whose redirect URI is neither https nor loopback http', async () => {
    const r = await register(['http://evil.example.com/cb']);
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_redirect_uri');
  });

  it('/mcp without a valid access token answers 401 with the resource metadata; an API key is refused too', async () => {
    for (const credential of [null, s.key, 'garbage']) {
      const r = await rpc(credential, { jsonrpc: '2.0', id: 1, method: 'ping' });
      expect(r.status).toBe(401);
      expect(r.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${s.url}/.well-known/oauth-protected-resource/mcp"${credential ? ', error="invalid_token"' : ''}`);
    }
  });
});

describe('the authorization code flow with PKCE', () => {
  it('consent page names the client, the redirect host and the scopes, and cannot be framed', async () => {
    const { body: c } = await register();
    const a = await authorize(c.client_id, { scope: 'documents:read signature_requests:write' });
    expect(a.html).toContain('Test agent');
    expect(a.html).toContain('127.0.0.1:7777');
    expect(a.html).toContain('signature_requests:write');
    expect(a.page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const loc = new URL(a.location!);
    expect(loc.searchParams.get('state')).toBe('st4te');
    expect(loc.searchParams.get('iss')).toBe(s.url);
    expect(loc.searchParams.get('code')).toMatch(/^[A-Za-z0-9]{43}$/);
  });

  it('a cross-site POST of the consent form is refused', async () => {
    const { body: c } = await register();
    const p = pkce();
    const r = await fetch(`${s.url}/oauth/authorize`, {
      ...form({ client_id: c.client_id, response_type: 'code', redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', resource, api_key: s.key, decision: 'allow' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example.com' },
      redirect: 'manual',
    });
    expect(r.status).toBe(403);
  });

  it('deny → access_denied at the redirect URI; a wrong key re-shows the form', async () => {
    const { body: c } = await register();
    const denied = await authorize(c.client_id, { decision: 'deny' });
    expect(new URL(denied.location!).searchParams.get('error')).toBe('access_denied');
    const wrong = await authorize(c.client_id, { key: 'esig_test_00000000000000000000000000000000' });
    expect(wrong.post!.status).toBe(401);
  });

  it('plain PKCE, a wrong resource and an unregistered redirect URI are refused', async () => {
    const { body: c } = await register();
    const plain = await authorize(c.client_id, { method: 'plain' });
    expect(new URL(plain.location!).searchParams.get('error')).toBe('invalid_request');
    const target = await authorize(c.client_id, { resource: 'https://elsewhere.example.com/mcp' });
    expect(new URL(target.location!).searchParams.get('error')).toBe('invalid_target');
    const badRedirect = await authorize(c.client_id, { redirect: 'https://attacker.example.com/cb' });
    expect(badRedirect.page.status).toBe(400);
    expect(badRedirect.location).toBeNull();
  });

  it('a loopback redirect URI that a browser reads as another host is refused, and nothing is redirected there', async () => {
    const { body: c } = await register();
    for (const redirect of ['http://attacker.example\\@127.0.0.1/callback', 'http://attacker.example@127.0.0.1:7777/callback', 'http://127.0.0.1:7777\\.attacker.example/callback']) {
      const a = await authorize(c.client_id, { redirect });
      expect(a.page.status, redirect).toBe(400);
      expect(a.location, redirect).toBeNull();
      expect(a.html).not.toContain('you are sent to');
      // The form posted anyway (as the attacker would) is refused the same way.
      const p = pkce();
      const post = await fetch(`${s.url}/oauth/authorize`, {
        ...form({ client_id: c.client_id, response_type: 'code', redirect_uri: redirect, code_challenge: p.challenge, code_challenge_method: 'S256', resource, api_key: s.key, decision: 'allow' }),
        redirect: 'manual',
      });
      expect(post.status, redirect).toBe(400);
      expect(post.headers.get('location')).toBeNull();
    }
  });

  it('a redirect URI a browser cannot parse is refused at registration, not a 500 later', async () => {
    for (const uri of ['https://good.example.com:99999/cb', 'https://a%zz.example.com/cb', 'https://xn--zz.example.com/cb']) {
      const r = await register([uri]);
      expect(r.status, uri).toBe(400);
      expect(r.body.error).toBe('invalid_redirect_uri');
    }
  });

  it('a client with one registered redirect URI may leave redirect_uri out of both the authorization and the token request', async () => {
    const { body: c } = await register();
    const p = pkce();
    const params = { client_id: c.client_id, response_type: 'code', code_challenge: p.challenge, code_challenge_method: 'S256', resource, state: 'st4te' };
    const page = await fetch(`${s.url}/oauth/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });
    expect(page.status).toBe(200);
    const post = await fetch(`${s.url}/oauth/authorize`, { ...form({ ...params, api_key: s.key, decision: 'allow' }), redirect: 'manual' });
    const location = new URL(post.headers.get('location')!);
    expect(location.origin + location.pathname).toBe(REDIRECT);
    const t = await token({ grant_type: 'authorization_code', code: location.searchParams.get('code')!, code_verifier: p.verifier, client_id: c.client_id, resource });
    expect(t.status).toBe(200);
    expect(t.body.access_token).toMatch(/^esig_oat_/);
    // With two registered URIs the parameter is required, at the token endpoint too.
    const { body: two } = await register([REDIRECT, 'http://127.0.0.1:7777/other']);
    const a = await authorize(two.client_id);
    const code = new URL(a.location!).searchParams.get('code')!;
    expect((await token({ grant_type: 'authorization_code', code, code_verifier: a.verifier, client_id: two.client_id, resource })).body.error).toBe('invalid_grant');
  });

  it('a wrong verifier fails; a reused code fails and revokes the grant made from it', async () => {
    const { body: c } = await register();
    const a = await authorize(c.client_id);
    const code = new URL(a.location!).searchParams.get('code')!;
    const wrong = await token({ grant_type: 'authorization_code', code, code_verifier: pkce().verifier, client_id: c.client_id, redirect_uri: REDIRECT });
    expect(wrong.body.error).toBe('invalid_grant');
    const b = await authorize(c.client_id);
    const code2 = new URL(b.location!).searchParams.get('code')!;
    const first = await token({ grant_type: 'authorization_code', code: code2, code_verifier: b.verifier, client_id: c.client_id, redirect_uri: REDIRECT, resource });
    expect(first.status).toBe(200);
    expect((await rpc(first.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).not.toBe(401);
    const again = await token({ grant_type: 'authorization_code', code: code2, code_verifier: b.verifier, client_id: c.client_id, redirect_uri: REDIRECT, resource });
    expect(again.body.error).toBe('invalid_grant');
    expect((await rpc(first.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
  });

  it('refresh tokens rotate; reusing a spent one revokes the grant', async () => {
    const t = await connectAgent();
    const r1 = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(r1.status).toBe(200);
    expect(r1.body.refresh_token).not.toBe(t.refresh_token);
    expect((await rpc(r1.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    const reuse = await token({ grant_type: 'refresh_token', refresh_token: t.refresh_token, client_id: t.clientId });
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await rpc(r1.body.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);
    const next = await token({ grant_type: 'refresh_token', refresh_token: r1.body.refresh_token, client_id: t.clientId });
    expect(next.body.error).toBe('invalid_grant');
  });

  it('revocation (RFC 7009) and revoking the consenting key both end the grant', async () => {
    const t = await connectAgent();
    // Named as another client's (§2.1): refused, and the token still works; an unknown token is answered 200 (§2.2).
    const other = await fetch(`${s.url}/oauth/revoke`, form({ token: t.access_token, client_id: 'ocl_someone_else' }));
    expect([other.status, await other.json()]).toEqual([400, { error: 'unauthorized_client', error_description: 'This token was issued to another client.' }]);
    expect((await rpc(t.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(200);
    expect((await fetch(`${s.url}/oauth/revoke`, form({ token: 'esig_oat_nothing', client_id: t.clientId }))).status).toBe(200);
    expect((await fetch(`${s.url}/oauth/revoke`, form({ token: t.access_token, client_id: t.clientId }))).status).toBe(200);
    expect((await rpc(t.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' })).status).toBe(401);

    const key = await s.newKey('default', 'test', ['*']);
    const t2 = await connectAgent({ key });
    expect((await s.call('GET', '/api/v1/documents', { key: t2.access_token })).status).toBe(200);
    const keys = await s.call('GET', '/api/v1/api-keys?limit=100');
    const keyId = (keys.body.data as Array<{ id: string; prefix: string }>).find((k) => key.startsWith(k.prefix))!.id;
    expect((await s.call('DELETE', `/api/v1/api-keys/${keyId}`)).status).toBe(200);
    expect((await s.call('GET', '/api/v1/documents', { key: t2.access_token })).status).toBe(401);
  });

  it('a client identified by a metadata document (served over HTTPS) authorizes and gets tokens', async () => {
    const clientId = `${rx.url}/oauth/client.json`;
    rx.answer('/oauth/client.json', { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_id: clientId, client_name: 'CIMD agent', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) });
    const a = await authorize(clientId);
    expect(a.html).toContain('CIMD agent');
    const code = new URL(a.location!).searchParams.get('code')!;
    const t = await token({ grant_type: 'authorization_code', code, code_verifier: a.verifier, client_id: clientId, redirect_uri: REDIRECT, resource });
    expect(t.status).toBe(200);
    const client = await mcpClient(t.body.access_token);
    expect((await client.listTools()).tools.length).toBeGreaterThan(10);
    await client.close();
  });
});

describe('client metadata documents that cannot be fetched', () => {
  // Which certificate failures get the same text is the fetcher's test (adapters/webhook-https).
  it('are refused without the server’s network errors: a name that does not resolve, a closed port', async () => {
    const cases: Array<[string, string]> = [
      ['https://nosuch.invalid/client.json', 'The client metadata document could not be fetched: nosuch.invalid did not resolve to any address'],
      [
        `https://127.0.0.1:${await freePort()}/client.json`,
        'The client metadata document could not be fetched: no HTTPS answer came from its host (it must accept the connection, present a certificate trusted for its name and answer within 5000 ms)',
      ],
    ];
    for (const [clientId, description] of cases) {
      const t = await token({ grant_type: 'authorization_code', code: 'x', code_verifier: 'y', client_id: clientId, redirect_uri: REDIRECT, resource });
      expect(t, clientId).toEqual({ status: 401, body: { error: 'invalid_client', error_description: description } });
      const page = await fetch(`${s.url}/oauth/authorize?${new URLSearchParams({ client_id: clientId, response_type: 'code' })}`);
      expect(await page.text(), clientId).toContain(`<p>${description}</p>`);
    }
  });
});

describe('the tool server', () => {
  it('negotiates every supported revision, answers 2025-11-25 to others, and refuses an unsupported header later', async () => {
    const t = await connectAgent();
    for (const v of ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05', '2024-10-07', '2026-07-28']) {
      const r = await rpc(t.access_token, { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: v, capabilities: {}, clientInfo: { name: 'x', version: '1' } } });
      expect(r.status).toBe(200);
      const body = (await r.json()) as { result: { protocolVersion: string } };
      expect(body.result.protocolVersion).toBe(v === '2026-07-28' ? '2025-11-25' : v);
      const list = await rpc(t.access_token, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, { 'mcp-protocol-version': v });
      expect(list.status).toBe(v === '2026-07-28' ? 400 : 200);
    }
  });

  it('refuses a foreign Origin with 403', async () => {
    const t = await connectAgent();
    expect((await rpc(t.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'https://evil.example.com' })).status).toBe(403);
    expect((await rpc(t.access_token, { jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: s.url })).status).toBe(200);
  });

  it('the SDK client creates and sends a signature request through tools; the calls are logged with the client id', async () => {
    const t = await connectAgent();
    const client = await mcpClient(t.access_token);
    const tools = (await client.listTools()).tools;
    expect(tools.map((x) => x.name)).toEqual(expect.arrayContaining(['upload_document', 'create_signature_request', 'send_signature_request', 'get_finished_document']));
    expect(tools.find((x) => x.name === 'cancel_signature_request')!.annotations).toMatchObject({ destructiveHint: true });
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = await client.callTool({ name, arguments: args });
      if (r.isError) throw new Error(JSON.stringify(r.content));
      return r.structuredContent as Record<string, any>;
    };
    const doc = await call('upload_document', { name: 'nda.pdf', contentBase64: Buffer.from(await makePdf(1)).toString('base64') });
    expect(doc.id).toMatch(/^doc_/);
    const req = await call('create_signature_request', { title: 'NDA via tools', documentIds: [doc.id], idempotencyKey: 'mcp-create-1' });
    const rcp = await call('add_recipient', { requestId: req.id, email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' });
    expect(rcp.id).toMatch(/^rcp_/);
    await call('add_field', { requestId: req.id, documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 });
    const sent = await call('send_signature_request', { requestId: req.id });
    expect(sent.status).toBe('SENT');
    // An embedded signing session for the signer, bound to the product's origin (test mode: loopback http is allowed).
    const session = await call('create_embedded_session', { requestId: req.id, recipientId: rcp.id, origin: 'https://app.example.com' });
    expect(session).toMatchObject({ requestId: req.id, recipientId: rcp.id, origin: 'https://app.example.com' });
    expect(session.url).toMatch(/\/embed\/[A-Za-z0-9_-]{22,}$/);
    const badOrigin = await client.callTool({ name: 'create_embedded_session', arguments: { requestId: req.id, recipientId: rcp.id, origin: 'https://app.example.com/path' } });
    expect(badOrigin.isError).toBe(true);
    expect(JSON.stringify(badOrigin.content)).toContain('validation_failed');
    const notDone = await client.callTool({ name: 'get_finished_document', arguments: { requestId: req.id } });
    expect(notDone.isError).toBe(true);
    expect(JSON.stringify(notDone.content)).toContain('invalid_state');
    await client.close();

    // The request log is written in batches off the request path: wait for the send to appear.
    let mine: Array<{ oauthClientId: string | null; keyId: string; target: string }> = [];
    for (let i = 0; i < 50 && !mine.some((l) => l.target.endsWith('/send')); i++) {
      await new Promise((r) => setTimeout(r, 200));
      const logs = await s.call('GET', '/api/v1/logs?limit=100');
      mine = (logs.body.data as typeof mine).filter((l) => l.oauthClientId === t.clientId);
    }
    expect(mine.map((l) => l.target)).toEqual(expect.arrayContaining([`/api/v1/signature-requests/${req.id}/send`]));
    expect(mine[0]!.keyId).toMatch(/^key_/);
  });

  it('a tool call whose arguments break its inputSchema is validation_failed naming the argument, not an internal or connection fault', async () => {
    const t = await connectAgent();
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['upload_document', { name: 'a.pdf', contentBase64: 123 }, 'contentBase64'],
      ['create_signature_request', { title: 'x', documentIds: ['doc_00000000000000000000000000'], idempotencyKey: 'é☃' }, 'idempotencyKey'],
      ['create_signature_request', { title: 'x', documentIds: ['doc_00000000000000000000000000'], idempotencyKey: 'a\nb' }, 'idempotencyKey'],
      ['get_signature_request', { requestId: 'req_00000000000000000000000000', surprise: true }, 'surprise'],
    ];
    for (const [name, args, path] of cases) {
      const r = await rpc(t.access_token, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });
      const { result } = (await r.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } };
      expect(result.isError, name).toBe(true);
      const text = result.content[0]!.text;
      expect(text, `${name} ${path}`).toMatch(/^validation_failed: /);
      expect(text).toContain(path);
      expect(text).not.toMatch(/ByteString|Headers\.append|first argument|internal|connection_error/);
    }
  });

  it('scopes apply to tool calls as to REST calls: a read-only grant gets insufficient_scope', async () => {
    const key = await s.newKey('default', 'test', ['documents:read']);
    const t = await connectAgent({ key, scope: 'documents:read documents:write' });
    expect(t.scope).toBe('documents:read');
    const client = await mcpClient(t.access_token);
    expect((await client.callTool({ name: 'list_documents', arguments: {} })).isError).toBeFalsy();
    const r = await client.callTool({ name: 'create_signature_request', arguments: { title: 'x', documentIds: ['doc_00000000000000000000000000'] } });
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.content)).toContain('insufficient_scope');
    await client.close();
  });

  it('a tool call out of the API’s bounds is judged by the API, as a direct call is: the scope first, then the bounds, both logged', async () => {
    const key = await s.newKey('default', 'test', ['webhooks:read']);
    const narrow = await connectAgent({ key, scope: 'webhooks:read' });
    const wide = await connectAgent();
    const text = async (token: string, args: Record<string, unknown>) => {
      const client = await mcpClient(token);
      try {
        const r = await client.callTool({ name: 'list_documents', arguments: args });
        expect(r.isError).toBe(true);
        return (r.content as Array<{ text: string }>)[0]!.text;
      } finally {
        await client.close();
      }
    };
    // As `GET /api/v1/documents?limit=500` answers each: 403 for a grant without documents:read, 400 for one with it.
    expect(await text(narrow.access_token, { limit: 500 })).toMatch(/^insufficient_scope: /);
    expect(await text(wide.access_token, { limit: 500 })).toMatch(/^validation_failed: .*limit/);
    // Both reached the API, and its log (written in batches off the request path).
    let targets: string[] = [];
    for (let i = 0; i < 50 && targets.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 200));
      const logs = await s.call('GET', '/api/v1/logs?limit=100');
      targets = (logs.body.data as Array<{ oauthClientId: string | null; target: string; status: number | null }>)
        .filter((l) => (l.oauthClientId === narrow.clientId || l.oauthClientId === wide.clientId) && l.target.startsWith('/api/v1/documents'))
        .map((l) => `${l.status}`);
    }
    expect(targets.sort()).toEqual(['400', '403']);
  });

  it('holds its large bodies within a budget per organization and mode, refusing one more before reading it', async () => {
    // The tool server is not rate limited itself, and reads bodies of up to 40 MiB (a PDF as base64) whole: a caller
    // that sends a large body's headers and then nothing held it, as many at once as it liked.
    const t = await connectAgent();
    /** A POST of `length` declared bytes that waits for `100 Continue` before its body: the first answer it gets. */
    const post = (length: number, bearer = t.access_token) =>
      new Promise<{ head: string; socket: import('node:net').Socket }>((resolve, reject) => {
        const { hostname, port } = new URL(s.url);
        let text = '';
        const socket = connect(Number(port), hostname, () =>
          socket.write(
            `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`,
          ),
        );
        socket.on('data', (b) => {
          text += b.toString('latin1');
          if (text.includes('\r\n\r\n')) resolve({ head: text.slice(0, text.indexOf('\r\n')), socket });
        });
        socket.on('error', reject);
      });
    // Half of the default budget (8 × 25 MiB) is one tenant's share: two bodies of 40 MB fit, a third does not.
    const held = [await post(40_000_000), await post(40_000_000)];
    try {
      expect(held.map((h) => h.head)).toEqual(['HTTP/1.1 100 Continue', 'HTTP/1.1 100 Continue']);
      const third = await post(40_000_000);
      expect(third.head).toBe('HTTP/1.1 503 Service Unavailable');
      third.socket.destroy();
      // Small calls are not counted: the same agent's tool calls go on.
      const client = await mcpClient(t.access_token);
      expect((await client.callTool({ name: 'list_documents', arguments: { limit: 1 } })).isError).toBeFalsy();
      await client.close();
      // A caller without a valid token reserves nothing: it is answered 401 before any of its body is sent.
      // A body over the tool server's 40 MiB is refused from its headers, not read and then called a parse error.
      const over = await post(40 * 1024 * 1024 + 1);
      over.socket.destroy();
      expect(over.head).toBe('HTTP/1.1 413 Payload Too Large');
      const stranger = await post(40_000_000, 'esig_oat_nope');
      stranger.socket.destroy();
      expect(stranger.head).toBe('HTTP/1.1 401 Unauthorized');
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });

  it('reads a body as large as an upload of the server’s largest size as base64, when that is over 40 MiB', async () => {
    // ESIG_MAX_UPLOAD_BYTES of 45 MiB: its base64 is 60 MiB, past the tool server's default limit.
    const bigPort = await freePort();
    const big = await startTestServer({
      ESIG_PORT: String(bigPort),
      ESIG_PUBLIC_URL: `http://127.0.0.1:${bigPort}`,
      ESIG_MAX_UPLOAD_BYTES: String(45 * 1024 * 1024),
      ESIG_RATE_LIMIT_ADDRESS: '100000',
    });
    try {
      const res = `${big.url}/mcp`;
      const client = (await (await fetch(`${big.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Big', redirect_uris: [REDIRECT] }) })).json()) as { client_id: string };
      const p = pkce();
      const consent = { client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', resource: res };
      const post = await fetch(`${big.url}/oauth/authorize`, { ...form({ ...consent, api_key: big.key, decision: 'allow' }), redirect: 'manual' });
      const code = new URL(post.headers.get('location')!).searchParams.get('code')!;
      const t = (await (await fetch(`${big.url}/oauth/token`, form({ grant_type: 'authorization_code', code, code_verifier: p.verifier, client_id: client.client_id, redirect_uri: REDIRECT, resource: res }))).json()) as { access_token: string };
      const { hostname, port } = new URL(big.url);
      /** The first answer to a POST of `length` declared bytes that waits for `100 Continue`. */
      const head = (length: number) =>
        new Promise<string>((resolve, reject) => {
          let text = '';
          const socket = connect(Number(port), hostname, () =>
            socket.write(`POST /mcp HTTP/1.1\r\nHost: ${hostname}:${port}\r\nAuthorization: Bearer ${t.access_token}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`),
          );
          socket.on('data', (b) => {
            text += b.toString('latin1');
            if (text.includes('\r\n\r\n')) (socket.destroy(), resolve(text.slice(0, text.indexOf('\r\n'))));
          });
          socket.on('error', reject);
        });
      expect(await head(Math.ceil((45 * 1024 * 1024) / 3) * 4 + 1000)).toBe('HTTP/1.1 100 Continue');
      expect(await head(62 * 1024 * 1024)).toBe('HTTP/1.1 413 Payload Too Large');
    } finally {
      await big.close();
    }
  });

  /**
   * A server whose budget of `/mcp` bodies is one 40 MiB body for everyone (the tool server's limit; uploads of
   * 64 KiB at most), two agents of two organizations, and a raw connection to it.
   */
  const withSmallBudget = async (
    test: (o: {
      small: TestServer;
      mallory: string;
      alice: string;
      send: (text: string) => Promise<{ socket: import('node:net').Socket; text: () => string }>;
      until: (what: () => boolean) => Promise<void>;
      head: (bearer: string) => Promise<string>;
      hostname: string;
      p: string;
    }) => Promise<void>,
  ) => {
    const port = await freePort();
    const small = await startTestServer({
      ESIG_PORT: String(port),
      ESIG_PUBLIC_URL: `http://127.0.0.1:${port}`,
      ESIG_MAX_UPLOAD_BYTES: String(64 * 1024),
      ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(100 * 1024),
      ESIG_RATE_LIMIT_ADDRESS: '100000',
    });
    try {
      const res = `${small.url}/mcp`;
      const agentOf = async (key: string) => {
        const client = (await (await fetch(`${small.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'Small', redirect_uris: [REDIRECT] }) })).json()) as { client_id: string };
        const p = pkce();
        const consent = { client_id: client.client_id, response_type: 'code', redirect_uri: REDIRECT, code_challenge: p.challenge, code_challenge_method: 'S256', resource: res };
        const post = await fetch(`${small.url}/oauth/authorize`, { ...form({ ...consent, api_key: key, decision: 'allow' }), redirect: 'manual' });
        const code = new URL(post.headers.get('location')!).searchParams.get('code')!;
        return ((await (await fetch(`${small.url}/oauth/token`, form({ grant_type: 'authorization_code', code, code_verifier: p.verifier, client_id: client.client_id, redirect_uri: REDIRECT, resource: res }))).json()) as { access_token: string }).access_token;
      };
      const mallory = await agentOf(small.key);
      const alice = await agentOf(await small.newKey('alice', 'test'));
      const { hostname, port: p } = new URL(small.url);
      const send = (text: string) =>
        new Promise<{ socket: import('node:net').Socket; text: () => string }>((resolve, reject) => {
          let got = '';
          const socket = connect(Number(p), hostname, () => (socket.write(text), resolve({ socket, text: () => got })));
          socket.on('data', (b) => (got += b.toString('latin1')));
          socket.on('error', reject);
        });
      const until = async (what: () => boolean) => {
        for (let i = 0; i < 250 && !what(); i++) await new Promise((ok) => setTimeout(ok, 20));
      };
      /** The first answer to a 40 MB POST that waits for `100 Continue`. */
      const head = async (bearer: string) => {
        const c = await send(`POST /mcp HTTP/1.1\r\nHost: ${hostname}:${p}\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 40000000\r\nExpect: 100-continue\r\n\r\n`);
        await until(() => c.text().includes('\r\n\r\n'));
        c.socket.destroy();
        await new Promise((ok) => setTimeout(ok, 50));
        return c.text().slice(0, c.text().indexOf('\r\n'));
      };
      expect(await head(alice)).toBe('HTTP/1.1 100 Continue');
      await test({ small, mallory, alice, send, until, head, hostname, p });
    } finally {
      await small.close();
    }
  };

  it('lets a large body go once a tool call ends whose client left before its answer, so no tenant is refused for good', () =>
    withSmallBudget(async ({ small, mallory, alice, send, until, head, hostname, p }) => {
      // A tool call that takes a while (its API call is slow), in a 2 MB body: the client sends it all, then leaves.
      const docs = small.container.resolve(T.Stores).documents;
      const list = docs.list.bind(docs);
      let listed = 0;
      docs.list = (tenant, q) => async () => (await new Promise((ok) => setTimeout(ok, 300)), listed++, list(tenant, q)());
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'list_documents', arguments: { limit: 1 } } }) + ' '.repeat(2_000_000);
      const left = await send(
        `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${p}\r\nAuthorization: Bearer ${mallory}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      await new Promise((ok) => setTimeout(ok, 150));
      left.socket.destroy();
      await until(() => listed === 1);
      docs.list = list;
      await new Promise((ok) => setTimeout(ok, 200));
      // The call is over: what it held is free again, for the other organization too.
      expect(await head(alice)).toBe('HTTP/1.1 100 Continue');
    }));

  it('answers a batch that cancels one of its own requests, so what its body reserved is not held for good', () =>
    withSmallBudget(async ({ mallory, alice, send, until, head, hostname, p }) => {
      // Sent compressed, a body reserves the tool server's whole limit (40 MiB here: everyone's budget). The SDK's
      // protocol server answers nothing for a cancelled request, and the JSON response waited for its answer: the
      // call was never answered, its reservation never ended, and every organization's large bodies were refused
      // from then on (its client had long gone).
      const body = gzipSync(JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }]));
      const c = await send(
        `POST /mcp HTTP/1.1\r\nHost: ${hostname}:${p}\r\nAuthorization: Bearer ${mallory}\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-06-18\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      c.socket.write(body);
      await until(() => c.text().includes('"id":1}'));
      c.socket.destroy();
      expect(c.text()).toMatch(/^HTTP\/1\.1 200 OK/);
      await new Promise((ok) => setTimeout(ok, 50));
      expect(await head(alice)).toBe('HTTP/1.1 100 Continue');
    }));

  it('counts bodies of up to 1 MiB too: the tool server has no rate limit, so they were held unbounded, as many at once as a caller liked', () =>
    withSmallBudget(async ({ mallory, alice, send, head, hostname, p }) => {
      // Two calls of 1 MB each, all but their last byte sent: the server holds them until the read timeout.
      const held = await Promise.all(
        [1, 2].map(() =>
          send(`POST /mcp HTTP/1.1\r\nHost: ${hostname}:${p}\r\nAuthorization: Bearer ${mallory}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\n${' '.repeat(999_999)}`),
        ),
      );
      try {
        await new Promise((ok) => setTimeout(ok, 200));
        // With them, one body of the largest size does not fit.
        expect(await head(alice)).toBe('HTTP/1.1 503 Service Unavailable');
      } finally {
        for (const h of held) h.socket.destroy();
      }
    }));

  it('rate limits apply to tool calls per token: a 429 comes back as an isError result with the wait, not retried', async () => {
    const t = await connectAgent();
    const client = await mcpClient(t.access_token);
    let limited: { content: unknown } | null = null;
    for (let i = 0; i < 60 && limited === null; i++) {
      const r = await client.callTool({ name: 'list_documents', arguments: { limit: 1 } });
      if (r.isError) limited = { content: r.content };
    }
    expect(limited).not.toBeNull();
    expect(JSON.stringify(limited!.content)).toMatch(/rate_limited: try again in \d+ s/);
    await client.close();
  });
});
