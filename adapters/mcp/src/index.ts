import { Esig, EsigError, EsigRateLimitError } from '@esig/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ListToolsRequestSchema, SUPPORTED_PROTOCOL_VERSIONS, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import express from 'express';
import type { Request, RequestHandler, Response } from 'express';
import { invalidParams, screenParams } from './params.js';
import type { EsigTool } from './tools.js';
import { TOOLS } from './tools.js';

// ajv-formats is CommonJS: Node's ESM import gives its module.exports, the function, whose `default` is the function too.
type FormatsPlugin = (ajv: Ajv) => Ajv;
const formatsModule = addFormatsImport as unknown as FormatsPlugin & { readonly default?: FormatsPlugin };
const addFormats: FormatsPlugin = formatsModule.default ?? formatsModule;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
/** Each tool's inputSchema compiled once, on its first call. */
const validators = new WeakMap<EsigTool, ValidateFunction>();

/** What is wrong with a tool's arguments, as the API words a field's problem (`contentBase64 must be string`). */
const describeArguments = (errors: readonly ErrorObject[]): string =>
  errors
    .slice(0, 5)
    .map((e) => {
      const at = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
      const extra = e.keyword === 'additionalProperties' ? String((e.params as { additionalProperty?: unknown }).additionalProperty) : null;
      return extra !== null ? `${at === '' ? '' : `${at}.`}${extra} is not an argument of this tool` : `${at === '' ? 'arguments' : at} ${e.message ?? 'is invalid'}`;
    })
    .join('; ');

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
  /** The `fetch` the tools' API client uses (default the global one). */
  readonly fetch?: typeof fetch;
  readonly version?: string;
  /**
   * The largest body read, in bytes (default 40 MiB): an `upload_document` call carries its PDF as base64, a third
   * larger than the file. Give the HTTP adapter's `mcpMaxBodyBytes` the same value.
   */
  readonly maxBodyBytes?: number;
}

/** The default of `McpServerOptions.maxBodyBytes`: room for a 25 MiB PDF as base64. */
export const DEFAULT_MCP_MAX_BODY_BYTES = 40 * 1024 * 1024;

const problemText = (e: unknown): CallToolResult => {
  if (e instanceof EsigError) {
    const retryAfterS = e instanceof EsigRateLimitError ? e.retryAfter : undefined;
    const problem = { code: e.code, detail: e.detail, status: e.status, requestId: e.requestId, ...(e.errors.length > 0 ? { errors: e.errors } : {}), ...(retryAfterS != null ? { retryAfterS } : {}) };
    const lead = e.code === 'rate_limited' && retryAfterS != null ? `rate_limited: try again in ${retryAfterS} s.` : `${e.code}: ${e.detail}`;
    return { isError: true, content: [{ type: 'text', text: `${lead}\n${JSON.stringify(problem)}` }] };
  }
  return { isError: true, content: [{ type: 'text', text: `internal: the tool failed (${e instanceof Error ? e.message : String(e)}).` }] };
};

/** One protocol server for one request, acting with `token` (stateless: nothing is shared between requests). */
const buildServer = (tools: readonly EsigTool[], esig: Esig, version: string): Server => {
  const server = new Server({ name: 'esig', title: 'esig electronic signatures', version }, { capabilities: { tools: { listChanged: false } } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.annotations.title,
      description: t.description,
      inputSchema: t.inputSchema as { type: 'object' },
      ...(t.outputSchema ? { outputSchema: t.outputSchema as { type: 'object' } } : {}),
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (req): Promise<CallToolResult> => {
    const tool = tools.find((t) => t.name === req.params.name);
    if (tool === undefined) return { isError: true, content: [{ type: 'text', text: `unknown_tool: there is no tool named ${JSON.stringify(req.params.name)}.` }] };
    // The arguments are checked against the tool's own inputSchema before anything is sent: what would break the
    // API client (a number for a string, a header value with a line break) is the caller's, not an internal, fault.
    const args = req.params.arguments ?? {};
    const validate = validators.get(tool) ?? validators.set(tool, ajv.compile(tool.inputSchema)).get(tool)!;
    if (!validate(args)) return { isError: true, content: [{ type: 'text', text: `validation_failed: ${describeArguments(validate.errors ?? [])}.` }] };
    try {
      const out = await tool.run(esig, args as Record<string, unknown>);
      if (out.kind === 'pdf')
        return { content: [{ type: 'resource', resource: { uri: out.uri, mimeType: 'application/pdf', blob: Buffer.from(out.bytes).toString('base64') } }] };
      return { structuredContent: out.data, content: [{ type: 'text', text: JSON.stringify(out.data) }] };
    } catch (e) {
      return problemText(e);
    }
  });
  return server;
};

/**
 * The tool-protocol server at `/mcp`: Streamable HTTP, stateless — a fresh protocol server and transport
 * for every request, so nothing of one caller can reach another's. Requires an OAuth access token (401 with
 * the protected-resource metadata otherwise); refuses foreign browser origins (403). Every tool is a call of
 * the REST API with the caller's token.
 *
 * @example
 * app.all('/mcp', createMcpHandler({ publicUrl, apiBaseUrl: 'http://127.0.0.1:3000', verifyAccessToken }));
 */
export const createMcpHandler = (opts: McpServerOptions): RequestHandler => {
  const publicUrl = opts.publicUrl.replace(/\/$/, '');
  const origins = new Set([new URL(publicUrl).origin, ...(opts.allowedOrigins ?? [])]);
  const metadataUrl = `${publicUrl}/.well-known/oauth-protected-resource/mcp`;
  const json = express.json({ limit: opts.maxBodyBytes ?? DEFAULT_MCP_MAX_BODY_BYTES });
  const apiBase = typeof opts.apiBaseUrl === 'function' ? opts.apiBaseUrl : () => opts.apiBaseUrl as string;
  const version = opts.version ?? '0.1.0';

  const unauthorized = (res: Response, error: string | null) => {
    res.setHeader('WWW-Authenticate', `Bearer resource_metadata="${metadataUrl}"${error ? `, error="${error}"` : ''}`);
    res.status(401).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Unauthorized: send an OAuth access token (Authorization: Bearer esig_oat_…).' }, id: null });
  };

  return async (req: Request, res: Response) => {
    res.setHeader('Access-Control-Allow-Origin', req.get('origin') && origins.has(req.get('origin')!) ? req.get('origin')! : publicUrl);
    res.setHeader('Access-Control-Expose-Headers', 'WWW-Authenticate, Mcp-Session-Id, MCP-Protocol-Version');
    res.setHeader('Vary', 'Origin');
    // DNS rebinding and cross-site calls: a browser sends Origin; only our own and configured ones may call.
    const origin = req.get('origin');
    if (origin !== undefined && !origins.has(origin))
      return void res.status(403).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Forbidden: this Origin may not call the tool server.' }, id: null });
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
      return void res.status(405).json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: this server is stateless; POST JSON-RPC messages.' }, id: null });
    }
    json(req, res, async (err?: unknown) => {
      if (err) return void res.status(400).json({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
      const esig = new Esig({ apiKey: token, baseUrl: apiBase(), maxRetries: 0, ...(opts.fetch ? { fetch: opts.fetch } : {}) });
      const server = buildServer(TOOLS, esig, version);
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      // Closed once the call is answered, not when its client leaves: a transport closed before its tools have
      // answered never answers, and a response never ended keeps what the HTTP adapter reserved for its body.
      const closeAll = () => {
        void transport.close();
        void server.close();
      };
      // Invalid params are refused by us, as -32602 with a sentence: the SDK parses a request's params before any
      // handler of ours runs, and answers -32603 with its schema's issues as JSON (or -32700 for the whole body).
      // The refusal goes out between the transport, which has still checked the headers and the protocol version,
      // and the protocol server.
      const screened = screenParams(req.body);
      try {
        await server.connect(transport);
        const dispatch = transport.onmessage;
        if (screened.refusals.size > 0)
          transport.onmessage = (message, extra) => {
            if (isJSONRPCRequest(message)) {
              const problem = screened.refusals.get(message.id);
              // A send fails only once the client has gone (its response's stream is closed): nobody is left to tell.
              if (problem !== undefined) return void transport.send(invalidParams(message.id, problem)).catch(() => undefined);
            }
            dispatch?.(message, extra);
          };
        await transport.handleRequest(req, res, screened.body);
      } catch {
        if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null });
      } finally {
        closeAll();
      }
    });
  };
};
