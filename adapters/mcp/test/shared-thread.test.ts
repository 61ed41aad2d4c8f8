import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpHandler } from '../src/index.js';
import { tooManyJsonValues } from '../src/answer.js';
import { createMcpHandler } from '../src/index.js';

let server: Server;
let handler: McpHandler;
let url: string;

const headers = { authorization: 'Bearer esig_oat_test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

beforeAll(async () => {
  const app = express();
  // One thread (the default) answers every caller's tool calls.
  handler = createMcpHandler({ publicUrl: 'http://127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9', verifyAccessToken: async () => true });
  app.all('/mcp', handler);
  server = await new Promise<Server>((ok) => {
    const s = app.listen(0, '127.0.0.1', () => ok(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  // The thread starts at the first call: started here, so that its start is not counted as a wait below.
  await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }) });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((ok) => server.close(ok));
  await handler.close();
});

/** A tools/call whose arguments are `mb` MiB of one-character members: within the body limit, nothing like a real call. */
const manyMembers = (mb: number) => {
  const parts: string[] = [];
  for (let n = 0, len = 0; len < mb * 1024 * 1024; n++) {
    const p = `"k${n.toString(36)}":0`;
    parts.push(p);
    len += p.length + 1;
  }
  return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_documents","arguments":{${parts.join(',')}}}}`;
};

// A body's cost on the thread grew with its JSON values, not its bytes: 20 MiB of members (1.9 million) took about
// 35 s to parse, screen, parse again (the SDK) and validate (ajv, every error), against 0.2 s for a 21 MB upload of
// one string. Every other caller's calls waited behind it on the one thread.
describe('a body of millions of JSON values', () => {
  it('is refused before it is parsed, and another caller’s call meanwhile is answered at once', async () => {
    const started = Date.now();
    const heavy = fetch(url, { method: 'POST', headers, body: manyMembers(20) }).then(async (r) => ({ status: r.status, body: (await r.json()) as any, ms: Date.now() - started }));
    // Let the large body reach the thread first.
    await new Promise((ok) => setTimeout(ok, 1000));
    const t = Date.now();
    const ping = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }), signal: AbortSignal.timeout(5000) });
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
    expect(Date.now() - t).toBeLessThan(3000);
    const h = await heavy;
    expect(h.status).toBe(400);
    expect(h.body.error.code).toBe(-32600);
    expect(h.body.error.message).toMatch(/JSON values/);
  }, 60_000);

  it('an upload of one long string, the largest real body, is still read', async () => {
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'upload_document', arguments: { name: 'a.pdf', contentBase64: 'QUJD'.repeat(2 * 1024 * 1024) } } }) });
    const body = (await r.json()) as any;
    // The tool ran: the API behind it does not answer, so its result is the tool's connection error.
    expect(body.result.content[0].text).toMatch(/^connection_error/);
  });

  it('a batch of a hundred calls with their arguments is well within the bound', async () => {
    const batch = Array.from({ length: 100 }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'create_signature_request', arguments: { title: 'x', documentIds: Array.from({ length: 20 }, () => 'doc_00000000000000000000000000') }, _meta: { a: [1, 2, 3], b: { c: 1 } } } }));
    const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(batch) });
    expect(r.status).toBe(200);
    expect(((await r.json()) as unknown[]).length).toBe(100);
  });
});

describe('counting a body’s JSON values', () => {
  const enc = (text: string) => new TextEncoder().encode(text);
  it('counts commas, brackets and braces outside strings only', () => {
    // `[`, `,`, `,`: three.
    expect(tooManyJsonValues(enc('[1,2,3]'), 2)).toBe(true);
    expect(tooManyJsonValues(enc('[1,2,3]'), 3)).toBe(false);
    expect(tooManyJsonValues(enc('["a,b,c,{[", 1]'), 2)).toBe(false);
  });
  it('a quote escaped inside a string does not end it; one after an escaped backslash does', () => {
    expect(tooManyJsonValues(enc(String.raw`["a\",b,c,d"]`), 1)).toBe(false);
    expect(tooManyJsonValues(enc(String.raw`["a\\",1,2]`), 2)).toBe(true);
    expect(tooManyJsonValues(enc(String.raw`["a\\\",1,2"]`), 1)).toBe(false);
  });
  it('an unterminated string ends the count (JSON.parse refuses the body)', () => {
    expect(tooManyJsonValues(enc('[1,"abc,,,,'), 2)).toBe(false);
  });
});
