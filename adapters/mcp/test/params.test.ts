import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMcpHandler } from '../src/index.js';

let server: Server;
let url: string;

beforeAll(async () => {
  const app = express();
  // No tool is expected to reach the API here: port 9 on loopback answers nothing.
  app.all('/mcp', createMcpHandler({ publicUrl: 'http://127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9', verifyAccessToken: async () => true }));
  server = await new Promise<Server>((ok) => {
    const s = app.listen(0, '127.0.0.1', () => ok(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
});
afterAll(async () => {
  await new Promise((ok) => server.close(ok));
});

const rpc = async (body: unknown, headers: Record<string, string> = {}) => {
  const r = await fetch(url, {
    method: 'POST',
    headers: { authorization: 'Bearer esig_oat_test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  return { status: r.status, body: (await r.json()) as any };
};

const call = (id: number, params: unknown) => ({ jsonrpc: '2.0', id, method: 'tools/call', ...(params === undefined ? {} : { params }) });

describe('tools/call params the protocol schema refuses', () => {
  // Each was an internal error (-32603) whose message was the SDK's zod issues as JSON, or for a `params` that is not
  // an object a 400 "Parse error" (-32700) for a body that parsed.
  it.each([
    ['arguments null', { name: 'list_documents', arguments: null }, 'params.arguments must be an object of the tool’s arguments (or left out), not null.'],
    ['arguments an array', { name: 'list_documents', arguments: [] }, 'params.arguments must be an object of the tool’s arguments (or left out), not an array.'],
    ['arguments a string', { name: 'list_documents', arguments: 'limit=1' }, 'params.arguments must be an object of the tool’s arguments (or left out), not a string.'],
    ['params null', null, 'params must be an object with the tool’s name and arguments, not null.'],
    ['params an array', ['list_documents', {}], 'params must be an object with the tool’s name and arguments, not an array.'],
    ['params a string', 'list_documents', 'params must be an object with the tool’s name and arguments, not a string.'],
    ['no params', undefined, 'params must be an object with the tool’s name and arguments; it is missing.'],
    ['no name', { arguments: {} }, 'params.name must be the name of a tool, a string; it is missing.'],
    ['name null', { name: null, arguments: {} }, 'params.name must be the name of a tool, a string, not null.'],
  ])('%s is -32602 Invalid params with a short message', async (_what, params, message) => {
    const r = await rpc(call(7, params));
    expect(r).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 7, error: { code: -32602, message: `Invalid params: ${message}` } } });
  });

  it('anything else the schema refuses is -32602 too, naming the field, without a zod dump', async () => {
    const r = await rpc(call(8, { name: 'list_documents', arguments: {}, _meta: 5 }));
    expect(r.status).toBe(200);
    expect(r.body.error).toEqual({ code: -32602, message: expect.stringMatching(/^Invalid params: params\._meta /) });
    expect(r.body.error.message).not.toMatch(/[[{]|invalid_type/);
  });

  it('the same for another method’s params that are not an object', async () => {
    const r = await rpc({ jsonrpc: '2.0', id: 9, method: 'tools/list', params: null });
    expect(r).toEqual({ status: 200, body: { jsonrpc: '2.0', id: 9, error: { code: -32602, message: 'Invalid params: params must be an object (or left out), not null.' } } });
  });

  it('a refused call in a batch is answered beside the others, which run', async () => {
    const r = await rpc([call(1, { name: 'list_documents', arguments: null }), { jsonrpc: '2.0', id: 2, method: 'ping' }, call(3, null)]);
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { jsonrpc: '2.0', id: 1, error: { code: -32602, message: expect.stringMatching(/^Invalid params: params\.arguments /) } },
      { jsonrpc: '2.0', id: 2, result: {} },
      { jsonrpc: '2.0', id: 3, error: { code: -32602, message: expect.stringMatching(/^Invalid params: params must be an object/) } },
    ]);
  });

  it('the transport’s own checks come first: an unsupported protocol revision is still a 400', async () => {
    const r = await rpc(call(11, { name: 'list_documents', arguments: null }), { 'mcp-protocol-version': '1999-01-01' });
    expect(r.status).toBe(400);
    expect(r.body.error.code).not.toBe(-32602);
  });

  it('a call without arguments still reaches the tools (an unknown tool is a tool error, as before)', async () => {
    const r = await rpc(call(10, { name: 'no_such_tool' }));
    expect(r).toMatchObject({ status: 200, body: { id: 10, result: { isError: true, content: [{ type: 'text', text: expect.stringMatching(/^unknown_tool: /) }] } } });
  });
});
