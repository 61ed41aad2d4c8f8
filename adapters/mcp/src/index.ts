import type { IncomingHttpHeaders } from 'node:http';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/sdk/types.js';
import express from 'express';
import type { Request, RequestHandler, Response } from 'express';
import type { McpAnswer, McpCall } from './answer.js';
import { MCP_HEADERS, PARSE_ERROR, answerMcp } from './answer.js';
import type { McpThreads } from './threads.js';
import { McpThreadStopped, createMcpThreads, threadEntry } from './threads.js';

export { TOOLS } from './tools.js';
export type { EsigTool, ToolAnnotations, ToolOutput } from './tools.js';

/** The revisions this server speaks (CONTRACT: 2025-11-25 latest, back to 2024-10-07). */
export const MCP_PROTOCOL_VERSIONS: readonly string[] = SUPPORTED_PROTOCOL_VERSIONS;

export interface McpServerOptions {
  /** The service's public URL (`ESIG_PUBLIC_URL`): the origin browsers may call from, and the base of the metadata URL. */
  readonly publicUrl: string;
  /** Where the tools reach the REST API (the same process's own listener, e.g. `http://127.0.0.1:3000`). */
  readonly apiBaseUrl: string | (() => string);
  /** Further browser origins allowed to call `/mcp` (`ESIG_MCP_ALLOWED_ORIGINS`). */
  readonly allowedOrigins?: readonly string[];
  /** True when the bearer credential is a valid OAuth access token (API keys and refresh tokens are not). */
  readonly verifyAccessToken: (token: string) => Promise<boolean>;
  /**
   * The `fetch` the tools' API client uses (default the global one). A function cannot reach a worker thread:
   * with one, the tool server runs on the calling thread (`threads` 0).
   */
  readonly fetch?: typeof fetch;
  /**
   * Worker threads that answer tool calls (default 1; 0 with a `fetch`). A call's body is decoded, parsed and
   * turned back into a PDF's bytes there, and a finished PDF turned into base64 and JSON, each growing with the
   * file (about 0.3 s of CPU for a 25 MiB PDF): on a thread, away from the event loop that answers the API. 0
   * answers on the calling thread.
   */
  readonly threads?: number;
  readonly version?: string;
  /**
   * The largest body read, in bytes (default 40 MiB): an `upload_document` call carries its PDF as base64, a third
   * larger than the file. Give the HTTP adapter's `mcpMaxBodyBytes` the same value.
   */
  readonly maxBodyBytes?: number;
}

/** The default of `McpServerOptions.maxBodyBytes`: room for a 25 MiB PDF as base64. */
export const DEFAULT_MCP_MAX_BODY_BYTES = 40 * 1024 * 1024;

export type McpHandler = RequestHandler & {
  /** Stops the tool server's threads; calls in hand are answered 503. */
  close(): Promise<void>;
};

const rpcError = (res: Response, status: number, code: number, message: string) => void res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null });

/** The headers the transport reads, as plain pairs. */
const transportHeaders = (headers: IncomingHttpHeaders): Array<[string, string]> =>
  MCP_HEADERS.flatMap((name) => {
    const v = headers[name];
    return v === undefined ? [] : [[name, Array.isArray(v) ? v.join(', ') : v] as [string, string]];
  });

/**
 * The tool-protocol server at `/mcp`: Streamable HTTP, stateless — a fresh protocol server and transport
 * for every request, so nothing of one caller can reach another's. Requires an OAuth access token (401 with
 * the protected-resource metadata otherwise); refuses foreign browser origins (403). Every tool is a call of
 * the REST API with the caller's token. Bodies are decoded and answers encoded on worker threads (`threads`);
 * `close()` stops them.
 *
 * @example
 * const mcp = createMcpHandler({ publicUrl, apiBaseUrl: 'http://127.0.0.1:3000', verifyAccessToken });
 * app.all('/mcp', mcp);
 * // at shutdown, once the HTTP server has closed:
 * await mcp.close();
 */
export const createMcpHandler = (opts: McpServerOptions): McpHandler => {
  const publicUrl = opts.publicUrl.replace(/\/$/, '');
  const origins = new Set([new URL(publicUrl).origin, ...(opts.allowedOrigins ?? [])]);
  const metadataUrl = `${publicUrl}/.well-known/oauth-protected-resource/mcp`;
  // Read as bytes, not parsed: decoding and parsing grow with the body, and are the thread's work. A body of another
  // type is left unread, as express.json left it: the transport refuses it (415) from its headers.
  const raw = express.raw({ type: (req) => isJsonContentType(req.headers['content-type']), limit: opts.maxBodyBytes ?? DEFAULT_MCP_MAX_BODY_BYTES });
  const apiBase = typeof opts.apiBaseUrl === 'function' ? opts.apiBaseUrl : () => opts.apiBaseUrl as string;
  const version = opts.version ?? '0.1.0';
  const threadCount = opts.threads ?? (opts.fetch ? 0 : 1);
  if (!Number.isInteger(threadCount) || threadCount < 0) throw new Error(`threads must be an integer ≥ 0 (got ${threadCount})`);
  if (threadCount > 0 && opts.fetch) throw new Error('A fetch function cannot reach a worker thread: give threads: 0 with it.');
  const threads: McpThreads | null = threadCount > 0 ? createMcpThreads(threadEntry(), { threads: threadCount }) : null;
  const answer = (call: McpCall): Promise<McpAnswer> => (threads ? threads.answer(call) : answerMcp(call, opts.fetch));

  const unauthorized = (res: Response, error: string | null) => {
    res.setHeader('WWW-Authenticate', `Bearer resource_metadata="${metadataUrl}"${error ? `, error="${error}"` : ''}`);
    rpcError(res, 401, -32001, 'Unauthorized: send an OAuth access token (Authorization: Bearer esig_oat_…).');
  };

  const handler = async (req: Request, res: Response) => {
    res.setHeader('Access-Control-Allow-Origin', req.get('origin') && origins.has(req.get('origin')!) ? req.get('origin')! : publicUrl);
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
    res.setHeader('Vary', 'Origin');
    // DNS rebinding and cross-site calls: a browser sends Origin; only our own and configured ones may call.
    const origin = req.get('origin');
    if (origin !== undefined && !origins.has(origin)) return rpcError(res, 403, -32000, 'Forbidden: this Origin may not call the tool server.');
    if (req.method === 'OPTIONS') {
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID');
      return void res.status(204).end();
    }
    const m = /^bearer +(\S+)$/i.exec(req.get('authorization') ?? '');
    if (m === null) return unauthorized(res, null);
    const token = m[1]!;
    if (!(await opts.verifyAccessToken(token))) return unauthorized(res, 'invalid_token');
    if (req.method !== 'POST') {
      // Stateless: no standalone server-to-client stream, no session to delete.
      res.setHeader('Allow', 'POST, OPTIONS');
      return rpcError(res, 405, -32000, 'Method not allowed: this server is stateless; POST JSON-RPC messages.');
    }
    raw(req, res, async (err?: unknown) => {
      if (err) return rpcError(res, 400, PARSE_ERROR.error.code, PARSE_ERROR.error.message);
      const body = Buffer.isBuffer(req.body) ? new Uint8Array(req.body.buffer, req.body.byteOffset, req.body.byteLength) : new Uint8Array(0);
      const call: McpCall = { method: req.method, url: `${publicUrl}/mcp`, headers: transportHeaders(req.headers), body, token, apiBaseUrl: apiBase(), version };
      try {
        const out = await answer(call);
        res.status(out.status);
        for (const [name, value] of out.headers) if (name !== 'content-length' && name !== 'transfer-encoding') res.setHeader(name, value);
        res.end(Buffer.from(out.body.buffer, out.body.byteOffset, out.body.byteLength));
      } catch (e) {
        if (res.headersSent) return;
        // A thread that stopped under a call (its heap outgrown, say) takes only its own calls with it; the next
        // call gets a new thread.
        if (e instanceof McpThreadStopped) {
          res.setHeader('Retry-After', '5');
          return rpcError(res, 503, -32603, 'Service unavailable: the tool server stopped while answering; try again.');
        }
        rpcError(res, 500, -32603, 'Internal error');
      }
    });
  };
  return Object.assign(handler, { close: async () => void (await threads?.close()) });
};
