import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { McpHandler, McpServerOptions } from '../src/index.js';
import { createMcpHandler } from '../src/index.js';

/** The headers of a tool-protocol POST with a token the test server takes. */
export const MCP_HEADERS = { authorization: 'Bearer esig_oat_test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };

export interface ServedMcp {
  readonly url: string;
  readonly server: Server;
  readonly handler: McpHandler;
  /** Closes the listener (and its connections) and the handler's threads. */
  close(): Promise<void>;
}

/**
 * The tool server alone on a loopback port, its token always taken. Its tools' API calls reach nothing (port 9 on
 * loopback answers nothing): a tool call is answered with its connection error, and what a test looks at is how
 * the body was read and answered.
 */
export const serveMcp = async (o: Partial<McpServerOptions> = {}): Promise<ServedMcp> => {
  const app = express();
  const handler = createMcpHandler({ publicUrl: 'http://127.0.0.1', apiBaseUrl: 'http://127.0.0.1:9', verifyAccessToken: async () => true, ...o });
  app.all('/mcp', handler);
  const server = await new Promise<Server>((ok) => {
    const s = app.listen(0, '127.0.0.1', () => ok(s));
  });
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    server,
    handler,
    close: async () => {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
      await handler.close();
    },
  };
};
