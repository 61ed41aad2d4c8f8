import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
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

const post = async (contentType: string, body: unknown) => {
  const r = await fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer esig_oat_test', 'content-type': contentType, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as any };
};

// A media type is case-insensitive and may carry parameters (RFC 9110 §8.3.1). express.json read such a body as
// JSON (type-is), and the SDK's transport takes it as JSON too; the tool server must not treat it as something else.
describe('a JSON body whose Content-Type is spelled otherwise than `application/json`', () => {
  it.each(['Application/JSON', 'APPLICATION/JSON; charset=UTF-8'])('%s: its params are screened as any other (-32602, not the SDK’s -32603 zod dump)', async (ct) => {
    const r = await post(ct, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 1 } });
    expect(r).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 3, error: { code: -32602, message: 'Invalid params: params.name must be the name of a tool, a string, not a number.' } } });
  });

  it('an upload of 5 MiB of base64 reaches its tool (the SDK reading the body itself refused anything over 4 MiB, 413)', async () => {
    const r = await post('Application/JSON', { jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'upload_document', arguments: { name: 'a.pdf', contentBase64: 'A'.repeat(5 * 1024 * 1024) } } });
    expect(r.status).toBe(200);
    // The tool ran: the API behind it does not answer, so its result is the tool's connection error.
    expect(r.body.result.isError).toBe(true);
    expect(r.body.result.content[0].text).toMatch(/^connection_error/);
  });
});

describe('a JSON body said to be in an encoding other than UTF-8', () => {
  it.each(['application/json; charset=ISO-8859-1', 'application/json; charset="utf-16"'])('%s is refused 415, not read as UTF-8', async (ct) => {
    const r = await post(ct, { jsonrpc: '2.0', id: 5, method: 'tools/list' });
    expect(r.status).toBe(415);
    expect(r.body.error.message).toMatch(/^Unsupported Media Type: a JSON-RPC body is UTF-8, not (iso-8859-1|utf-16)\.$/);
  });

  it.each(['application/json; charset=utf8', 'application/json;charset="UTF-8"'])('%s is read', async (ct) => {
    const r = await post(ct, { jsonrpc: '2.0', id: 6, method: 'tools/list' });
    expect(r.status).toBe(200);
    expect(r.body.result.tools.length).toBeGreaterThan(3);
  });
});

// The transport refuses a body of another type (415) from its headers. express.json left such a body unread; read as
// bytes whatever its type, it was read whole first (up to the 40 MiB limit, or until the body timeout for one that
// never ends), handed to the thread, and only then refused.
describe('a body that is not JSON', () => {
  it('is refused 415 from its headers, without waiting for the body', async () => {
    const { port } = served.server.address() as AddressInfo;
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      const socket = connect(port, '127.0.0.1', () =>
        socket.write(
          `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer esig_oat_test\r\nContent-Type: text/plain\r\nAccept: application/json, text/event-stream\r\nContent-Length: 1000000\r\n\r\nhello`,
        ),
      );
      socket.on('data', (b) => {
        text += b.toString('latin1');
        if (text.includes('\r\n\r\n')) (socket.destroy(), resolve(text.slice(0, text.indexOf('\r\n'))));
      });
      socket.on('error', reject);
      // The rest of the body never comes: an answer within 3 s is one given without it.
      setTimeout(() => (socket.destroy(), resolve('no answer in 3 s')), 3000);
    });
    expect(answer).toBe('HTTP/1.1 415 Unsupported Media Type');
  });
});
