#!/usr/bin/env node
// A third party's web app that lets its user sign inside its own page (docs/embedding.md). Plain Node, no
// framework, no dependency. The API key stays on this server: the browser only ever sees a one-time session
// URL, bound to this app's origin.
//
//   ESIG_API_KEY=esig_test_… node examples/embed-host/server.mjs      (beside `npm start`)
//   open http://localhost:5173
//
// Environment: ESIG_API_KEY (required, a test key with signature_requests:write and documents:write),
// ESIG_URL (default http://localhost:3000), HOST_PORT (default 5173).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const SAMPLE_PDF = fileURLToPath(new URL('../../docs/sample.pdf', import.meta.url));

/** A small esig API client over fetch: the calls this app makes, with the key on the server side. */
const esigApi = (esigUrl, apiKey) => async (method, path, body) => {
  const headers = { authorization: `Bearer ${apiKey}` };
  let payload;
  if (body instanceof Uint8Array) {
    headers['content-type'] = 'application/pdf';
    payload = body;
  } else if (body !== undefined) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(body);
  }
  const res = await fetch(`${esigUrl}${path}`, { method, headers, body: payload });
  const data = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${data.code ?? ''} ${data.detail ?? ''}`);
  return data;
};

const escapeHtml = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

const layout = (title, body) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${escapeHtml(title)}</title>
  <style>
    body { margin: 0; font: 16px/1.5 system-ui, sans-serif; background: #f3f4f8; color: #1a1d29; }
    header { padding: 12px 20px; background: #1f2a5a; color: #fff; }
    main { max-width: 1100px; margin: 0 auto; padding: 16px; }
    esig-signing { display: block; height: 75vh; border: 1px solid #ccd; background: #fff; }
    #log { font: 13px/1.4 ui-monospace, monospace; background: #fff; border: 1px solid #ccd; padding: 8px; max-height: 12rem; overflow: auto; }
    button { font: inherit; padding: 8px 16px; }
  </style>
</head>
<body>
  <header><strong>Acme CRM</strong> — an example app embedding esig</header>
  <main>${body}</main>
</body>
</html>`;

/**
 * The example app as an http.Server (not listening yet). `origin` is this app's origin as the browser sees
 * it: esig lets only that origin frame the signing page.
 */
export const createHostServer = ({ esigUrl, apiKey, origin }) => {
  const api = esigApi(esigUrl, apiKey);

  /** A demo request: the sample PDF, one signer, a text and a signature field, sent. */
  const createDemoRequest = async (firstName, lastName, email) => {
    const doc = await api('POST', '/api/v1/documents?name=sample.pdf', new Uint8Array(readFileSync(SAMPLE_PDF)));
    const req = await api('POST', '/api/v1/signature-requests', { title: 'Service agreement (embedded demo)', documentIds: [doc.id] });
    const rcp = await api('POST', `/api/v1/signature-requests/${req.id}/recipients`, { email, firstName, lastName });
    await api('POST', `/api/v1/signature-requests/${req.id}/fields`, { documentId: doc.id, recipientId: rcp.id, type: 'text', page: 1, x: 72, y: 560, width: 220, height: 28 });
    await api('POST', `/api/v1/signature-requests/${req.id}/fields`, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 620, width: 220, height: 50 });
    await api('POST', `/api/v1/signature-requests/${req.id}/send`);
    return { requestId: req.id, recipientId: rcp.id };
  };

  const home = () =>
    layout(
      'Acme CRM',
      `<h1>Sign without leaving Acme</h1>
      <p>This app creates a signature request through the esig API with its own key, then shows the signing page
      inside its own page. The browser never sees the key.</p>
      <form method="post" action="/start">
        <button type="submit">Create a demo request and sign it here</button>
      </form>`,
    );

  // Each load of this page creates a new one-time session: a session opens once, so a reload needs a new one.
  const signPage = (session, requestId) =>
    layout(
      'Sign — Acme CRM',
      `<h1>Please sign the service agreement</h1>
      <esig-signing url="${escapeHtml(session.url)}"></esig-signing>
      <p id="verdict">Waiting for the signature…</p>
      <pre id="log" aria-label="Events from the signing frame"></pre>
      <script src="${escapeHtml(esigUrl)}/embed.js"></script>
      <script>
        const log = (line) => { document.getElementById('log').textContent += line + '\\n'; };
        const el = document.querySelector('esig-signing');
        for (const type of ['ready', 'request.viewed', 'signer.authenticated', 'signer.signed', 'request.declined', 'request.completed', 'error'])
          el.addEventListener('esig:' + type, (e) => log(type + ' ' + JSON.stringify(e.detail)));
        // The browser event is a hint; the server asks esig before it believes it.
        const verify = async () => {
          const r = await fetch('/status?request=${encodeURIComponent(requestId)}');
          const s = await r.json();
          document.getElementById('verdict').textContent = 'Verified by Acme’s server with the esig API: request ' + s.status + ', signer ' + s.recipients[0].status + '.';
        };
        el.addEventListener('esig:signer.signed', verify);
        el.addEventListener('esig:request.declined', verify);
        el.addEventListener('esig:error', (e) => {
          document.getElementById('verdict').textContent = 'The signing page cannot be used: ' + e.detail.code + '. Reload to get a new session.';
        });
      </script>`,
    );

  return createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', origin);
    const send = (status, type, body, headers = {}) => {
      res.writeHead(status, { 'content-type': type, ...headers });
      res.end(body);
    };
    try {
      if (req.method === 'GET' && url.pathname === '/') return send(200, 'text/html; charset=utf-8', home());
      if (req.method === 'POST' && url.pathname === '/start') {
        const { requestId, recipientId } = await createDemoRequest('Ada', 'Lovelace', 'ada@example.com');
        return send(303, 'text/plain', 'See /sign', { location: `/sign?request=${requestId}&recipient=${recipientId}` });
      }
      if (req.method === 'GET' && url.pathname === '/sign') {
        const requestId = url.searchParams.get('request') ?? '';
        const recipientId = url.searchParams.get('recipient') ?? '';
        const session = await api('POST', `/api/v1/signature-requests/${encodeURIComponent(requestId)}/recipients/${encodeURIComponent(recipientId)}/embedded-sessions`, { origin }).catch(
          (e) => (/ 409 /.test(e.message) ? null : Promise.reject(e)),
        );
        if (session === null) {
          // 409: nothing to sign any more (signed, declined, cancelled…): say where the request stands.
          const r = await api('GET', `/api/v1/signature-requests/${encodeURIComponent(requestId)}`);
          const who = r.recipients.find((x) => x.id === recipientId);
          return send(200, 'text/html; charset=utf-8', layout('Acme CRM', `<h1>Nothing to sign</h1><p>The request is ${escapeHtml(r.status)}; the signer is ${escapeHtml(who?.status ?? 'unknown')}.</p><p><a href="/">Start again</a></p>`));
        }
        return send(200, 'text/html; charset=utf-8', signPage(session, requestId), { 'cache-control': 'no-store' });
      }
      if (req.method === 'GET' && url.pathname === '/status') {
        const r = await api('GET', `/api/v1/signature-requests/${encodeURIComponent(url.searchParams.get('request') ?? '')}`);
        return send(200, 'application/json', JSON.stringify({ status: r.status, recipients: r.recipients.map((x) => ({ id: x.id, status: x.status })) }));
      }
      send(404, 'text/plain; charset=utf-8', 'Not found');
    } catch (e) {
      send(502, 'text/html; charset=utf-8', layout('Error', `<h1>esig said no</h1><p>${escapeHtml(e.message)}</p><p><a href="/">Back</a></p>`));
    }
  });
};

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const apiKey = process.env.ESIG_API_KEY;
  if (!apiKey) {
    console.error('Set ESIG_API_KEY to a test key of your esig server (npm start prints one on first start).');
    process.exit(1);
  }
  const esigUrl = (process.env.ESIG_URL ?? 'http://localhost:3000').replace(/\/+$/, '');
  const port = Number(process.env.HOST_PORT ?? 5173);
  const origin = `http://localhost:${port}`;
  createHostServer({ esigUrl, apiKey, origin }).listen(port, () => console.log(`Acme CRM (embed host) on ${origin}, embedding ${esigUrl}`));
}
