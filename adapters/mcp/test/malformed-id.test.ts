import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ServedMcp } from './serve.js';
import { MCP_HEADERS, serveMcp } from './serve.js';

// An id is sent as a path segment, through encodeURIComponent, which throws on a lone surrogate ("\ud800" is valid
// JSON). Since ids are checked for their shape only, such an id reached the API client and the call was answered
// "internal: the tool failed (URI malformed)": the caller's fault told as the server's, and no API call made.
let served: ServedMcp;
beforeAll(async () => {
  served = await serveMcp();
});
afterAll(async () => {
  await served.close();
});

const call = async (name: string, args: Record<string, unknown>) => {
  const r = await fetch(served.url, {
    method: 'POST',
    headers: MCP_HEADERS,
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } }),
    signal: AbortSignal.timeout(10_000),
  });
  return ((await r.json()) as { result: { isError?: boolean; content: Array<{ text: string }> } }).result;
};

describe('an id that is not well-formed Unicode', () => {
  it('is the caller’s fault (validation_failed), not an internal one', async () => {
    for (const [name, args] of [
      ['get_document', { documentId: '\ud800' }],
      ['send_signature_request', { requestId: 'req_\udfff' }],
      ['create_embedded_session', { requestId: 'req_1', recipientId: 'a\ud800b', origin: 'https://example.com' }],
    ] as const) {
      const r = await call(name, args);
      expect(r.isError, name).toBe(true);
      expect(r.content[0]!.text, name).toMatch(/^validation_failed: /);
    }
  });

  it('a well-formed id of any form still reaches the API (here: nothing listens, a connection error)', async () => {
    const r = await call('get_document', { documentId: 'doc_é✓' });
    expect(r.content[0]!.text).toMatch(/^connection_error: /);
  });
});
