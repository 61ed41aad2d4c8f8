import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GrantedScope, Mode } from '@esig/core';
import { makePdf } from '@esig/testkit/pdf';
import { createKey, loadConfig, startServer } from '../src/index.js';
import { createResponseValidator } from './openapi-validator.js';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

export interface CallOptions {
  readonly key?: string | null;
  readonly body?: unknown;
  readonly raw?: { readonly bytes: Uint8Array | string; readonly contentType: string };
  readonly form?: FormData;
  readonly headers?: Record<string, string>;
}

/** A real esig server (composition root, SQLite file in a temp dir) on a loopback port, and a small client. */
/** A loopback port free at this moment: for a server whose public URL must name its port before it starts. */
export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });

export const startTestServer = async (env: Record<string, string> = {}) => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-http-'));
  const config = loadConfig({
    ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`,
    ESIG_PORT: '0',
    ESIG_HOST: '127.0.0.1',
    ESIG_LOG_LEVEL: 'error',
    // As in development: a transaction begun inside another's work fails the test instead of hanging it.
    ESIG_CHECK_TRANSACTIONS: 'true',
    ...env,
  });
  const running = await startServer(config, () => undefined);
  // SQLite prints a first-start key; on PostgreSQL the test makes its own, as an operator would with the CLI.
  const first = running.bootstrap ?? (await createKey(running.container, { orgName: 'default', mode: 'test', scopes: ['*'], name: 'test key' }));
  const key = first.secret;
  // Every response `call` receives is checked against the document this server serves (openapi-validator.ts).
  const openApi = createResponseValidator(await (await fetch(`${running.url}/api/v1/openapi.json`)).json());

  const call = async <T = any>(method: string, path: string, o: CallOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { ...(o.headers ?? {}) };
    const k = o.key === undefined ? key : o.key;
    if (k !== null) headers.authorization = `Bearer ${k}`;
    let body: RequestInit['body'];
    if (o.raw) {
      headers['content-type'] = o.raw.contentType;
      body = o.raw.bytes as RequestInit['body'];
    } else if (o.form) body = o.form;
    else if (o.body !== undefined) {
      headers['content-type'] ??= 'application/json';
      body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
    }
    const res = await fetch(`${running.url}${path}`, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    if ((res.headers.get('content-type') ?? '').includes('json') && text !== '') parsed = JSON.parse(text);
    const answer = { status: res.status, headers: res.headers, body: parsed as T, text };
    openApi.check(method, path, answer);
    return answer;
  };

  /**
   * A `fetch` for clients under test (`new Esig({ fetch: s.fetch })`): it checks every answer against the
   * OpenAPI document exactly as `call` does, and hands it over untouched.
   */
  const checkedFetch = async (url: string, init: RequestInit = {}): Promise<Response> => {
    const res = await fetch(url, init);
    const text = await res.clone().text();
    const body = (res.headers.get('content-type') ?? '').includes('json') && text !== '' ? JSON.parse(text) : text;
    const u = new URL(url);
    openApi.check(init.method ?? 'GET', `${u.pathname}${u.search}`, { status: res.status, headers: res.headers, body });
    return res;
  };

  const uploadPdf = async (name = 'contract.pdf', pages = 1, key?: string) => {
    const r = await call('POST', `/api/v1/documents?name=${encodeURIComponent(name)}`, { key, raw: { bytes: await makePdf(pages), contentType: 'application/pdf' } });
    if (r.status !== 201) throw new Error(`upload failed: ${r.status} ${r.text}`);
    return r.body as { id: string; pageCount: number };
  };

  /** The signing token of the first invitation mailed to `to`, read from the test mailbox once a worker has sent it. */
  const signingToken = async (to: string): Promise<string> => {
    for (let i = 0; i < 400; i++) {
      const mails = (await call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(to)}&limit=100`)).body.data as Array<{ text: string }>;
      const t = mails.map((m) => /\/sign\/([A-Za-z0-9]{43,})/.exec(m.text)?.[1]).find((x) => x !== undefined);
      if (t) return t;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`no invitation mailed to ${to}`);
  };

  /** A request with one signer and one signature field, ready to send. */
  const draftReady = async (key?: string) => {
    const doc = await uploadPdf('nda.pdf', 2, key);
    const req = (await call('POST', '/api/v1/signature-requests', { key, body: { title: 'NDA', documentIds: [doc.id] } })).body;
    const rcp = (await call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { key, body: { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace' } })).body;
    const fld = await call('POST', `/api/v1/signature-requests/${req.id}/fields`, {
      key,
      body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 },
    });
    if (fld.status !== 201) throw new Error(`field failed: ${fld.status} ${fld.text}`);
    return { doc, req, rcp };
  };

  /**
   * An upload the server has taken (authenticated, allowed, and within the bytes it holds at once) and started to read:
   * it asks with `Expect: 100-continue`, and the server answers `100 Continue` only when it reads the body. Its first
   * bytes are then sent, and the rest only when `finish` sends it (then the answer is read, and the server has let the
   * upload go), or never, if `destroy` drops the connection. Rejects with the server's answer if it refuses it.
   */
  const holdUpload = (declared: number | 'chunked', bearer: string = key) =>
    new Promise<{ finish: () => Promise<string>; destroy: () => void }>((resolve, reject) => {
      const { hostname, port } = new URL(running.url);
      const first = '%PDF-1.7';
      let text = '';
      let held = false;
      let closed: (answer: string) => void = () => undefined;
      const socket = connect(Number(port), hostname, () => {
        const length = declared === 'chunked' ? 'Transfer-Encoding: chunked' : `Content-Length: ${declared}`;
        socket.write(
          `POST /api/v1/documents?name=held.pdf HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${bearer}\r\nContent-Type: application/pdf\r\n${length}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`,
        );
      });
      socket.on('data', (b) => {
        text += b.toString('utf8');
        if (held || !text.includes('\r\n\r\n')) return;
        if (!text.startsWith('HTTP/1.1 100 ')) return reject(new Error(`the upload was not taken: ${text}`));
        held = true;
        text = text.slice(text.indexOf('\r\n\r\n') + 4);
        socket.write(declared === 'chunked' ? `${first.length.toString(16)}\r\n${first}\r\n` : first);
        resolve({
          finish: () =>
            new Promise<string>((done) => {
              closed = done;
              socket.write(declared === 'chunked' ? '0\r\n\r\n' : Buffer.alloc(declared - first.length, 0x20));
            }),
          destroy: () => socket.destroy(),
        });
      });
      socket.on('close', () => (held ? closed(text) : reject(new Error(`the connection closed: ${text}`))));
      socket.on('error', reject);
    });

  return {
    url: running.url,
    key,
    holdUpload,
    /** The wired container, to look at adapters (the PDF worker pool) while the server runs. */
    container: running.container,
    dir,
    orgId: first.org.id,
    call,
    fetch: checkedFetch,
    uploadPdf,
    draftReady,
    signingToken,
    newKey: async (orgName: string, mode: Mode, scopes: readonly GrantedScope[] = ['*']) =>
      (await createKey(running.container, { orgName, mode, scopes, name: `${orgName}-${mode}` })).secret,
    /** How many responses were checked against the OpenAPI document. */
    openApiStats: openApi.stats,
    close: async () => {
      // ESIG_OPENAPI_STATS=<file> collects the counts of a whole run (one line per server).
      if (process.env.ESIG_OPENAPI_STATS) appendFileSync(process.env.ESIG_OPENAPI_STATS, `${JSON.stringify(openApi.stats)}\n`);
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

export type TestServer = Awaited<ReturnType<typeof startTestServer>>;
