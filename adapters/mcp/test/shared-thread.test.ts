import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { tooManyJsonValues } from '../src/answer.js';
import type { ServedMcp } from './serve.js';
import { MCP_HEADERS as headers, serveMcp } from './serve.js';

let served: ServedMcp;
let url: string;

beforeAll(async () => {
  // One thread (the default) answers every caller's tool calls.
  served = await serveMcp();
  url = served.url;
  // The thread starts at the first call: started here, so that its start is not counted as a wait below.
  await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'ping' }) });
});
afterAll(async () => {
  await served.close();
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
  it('is refused before it is parsed (400, -32600), and the thread goes on answering', async () => {
    // On the calling thread (threads: 0) so that a spy sees every parse: none is given the body.
    const here = await serveMcp({ threads: 0 });
    const parse = JSON.parse;
    let largest = 0;
    const spy = vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
      if (typeof text === 'string') largest = Math.max(largest, text.length);
      return parse(text, reviver);
    });
    try {
      const r = await fetch(here.url, { method: 'POST', headers, body: manyMembers(20) });
      const body = (await r.json()) as any;
      expect(r.status).toBe(400);
      expect(body.error.code).toBe(-32600);
      expect(body.error.message).toMatch(/JSON values/);
      expect(largest).toBeLessThan(1024 * 1024);
    } finally {
      spy.mockRestore();
      await here.close();
    }
    // And on the shared thread, the next caller is answered.
    const ping = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' }) });
    expect(await ping.json()).toEqual({ jsonrpc: '2.0', id: 2, result: {} });
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
