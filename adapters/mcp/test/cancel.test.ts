import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedMcp } from './serve.js';
import { serveMcp } from './serve.js';

let served: ServedMcp;
let url: string;

beforeAll(async () => {
  served = await serveMcp();
  url = served.url;
});
afterAll(async () => {
  await served.close();
});

/** A POST that gives up after 5 s: a call never answered shows as a TimeoutError rather than a test that hangs. */
const rpc = async (body: unknown) => {
  const r = await fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer esig_oat_test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5000),
  });
  return { status: r.status, body: (await r.json()) as any };
};

const cancel = (requestId: number) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'changed my mind' } });

// Stateless: a cancellation can only name a request of its own body. The SDK's protocol server then answers nothing
// for that request, and a JSON response waits for an answer to every request of the body: the call was never
// answered (and what the HTTP adapter reserved for its body was held for good, its client there or not).
describe('a batch that cancels one of its own requests', () => {
  it('is answered, the request included (ping)', async () => {
    const r = await rpc([{ jsonrpc: '2.0', id: 1, method: 'ping' }, cancel(1)]);
    expect(r).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 1, result: {} } });
  });

  it('is answered, the request included (a tool call, cancelled while it waits on the API)', async () => {
    const r = await rpc([{ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'list_documents', arguments: {} } }, { jsonrpc: '2.0', id: 3, method: 'ping' }, cancel(2)]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { jsonrpc: '2.0', id: 2, result: expect.objectContaining({ isError: true }) },
      { jsonrpc: '2.0', id: 3, result: {} },
    ]);
  });

  it('a cancellation alone is accepted (202), as any notification', async () => {
    const r = await fetch(url, {
      method: 'POST',
      headers: { authorization: 'Bearer esig_oat_test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify(cancel(9)),
    });
    expect(r.status).toBe(202);
  });
});
