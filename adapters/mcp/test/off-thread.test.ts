import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMcpHandler } from '../src/index.js';
import type { ServedMcp } from './serve.js';
import { MCP_HEADERS, serveMcp } from './serve.js';

let served: ServedMcp | undefined;
afterEach(async () => {
  await served?.close();
  served = undefined;
});

const serve = async (threads: number | undefined) => {
  served = await serveMcp(threads === undefined ? {} : { threads });
  return served.url;
};

/** An upload_document call with `mb` MiB of base64, and the large strings JSON.parse was given on this thread meanwhile. */
const uploadWatchingParse = async (url: string, mb: number) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'upload_document', arguments: { name: 'big.pdf', contentBase64: Buffer.alloc(mb * 1024 * 1024, 7).toString('base64') } } });
  const parse = JSON.parse;
  const large: number[] = [];
  const spy = vi.spyOn(JSON, 'parse').mockImplementation((text: string, reviver?: (this: unknown, key: string, value: unknown) => unknown) => {
    if (typeof text === 'string' && text.length > 1024 * 1024) large.push(text.length);
    return parse(text, reviver);
  });
  try {
    const r = await fetch(url, { method: 'POST', headers: MCP_HEADERS, body });
    return { status: r.status, answer: (await r.json()) as { result?: { isError?: boolean; content: Array<{ text: string }> } }, large };
  } finally {
    spy.mockRestore();
  }
};

describe('where a tool call’s body is decoded', () => {
  it('on a worker thread by default: the event loop that answers the API never parses a large body', async () => {
    const url = await serve(undefined);
    const { status, answer, large } = await uploadWatchingParse(url, 3);
    expect(status).toBe(200);
    // The call ran (the API behind it does not answer, so its result is the tool's error), and was parsed elsewhere.
    expect(answer.result?.isError).toBe(true);
    expect(large).toEqual([]);
  });

  it('on the calling thread with threads: 0 (the same call, parsed here: what the default keeps off the event loop)', async () => {
    const url = await serve(0);
    const { status, answer, large } = await uploadWatchingParse(url, 3);
    expect(status).toBe(200);
    expect(answer.result?.isError).toBe(true);
    expect(large.length).toBe(1);
  });

  it('a fetch function needs the calling thread', () => {
    expect(() => createMcpHandler({ publicUrl: 'http://127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9', verifyAccessToken: async () => true, fetch, threads: 1 })).toThrow(/threads: 0/);
    expect(() => createMcpHandler({ publicUrl: 'http://127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9', verifyAccessToken: async () => true, threads: -1 })).toThrow(/threads must be/);
  });
});
