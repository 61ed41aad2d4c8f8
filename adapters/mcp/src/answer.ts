import { Esig, EsigError, EsigRateLimitError } from '@esig/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import { isJsonContentType } from '@modelcontextprotocol/sdk/shared/mediaType.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ListToolsRequestSchema, isJSONRPCNotification, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { Ajv } from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import addFormatsImport from 'ajv-formats';
import { invalidParams, screenParams } from './params.js';
import type { EsigTool } from './tools.js';
import { TOOLS, argumentsSchema } from './tools.js';

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

const problemText = (e: unknown): CallToolResult => {
  if (e instanceof EsigError) {
    const retryAfterS = e instanceof EsigRateLimitError ? e.retryAfter : undefined;
    const problem = { code: e.code, detail: e.detail, status: e.status, requestId: e.requestId, ...(e.errors.length > 0 ? { errors: e.errors } : {}), ...(retryAfterS != null ? { retryAfterS } : {}) };
    const lead = e.code === 'rate_limited' && retryAfterS != null ? `rate_limited: try again in ${retryAfterS} s.` : `${e.code}: ${e.detail}`;
    return { isError: true, content: [{ type: 'text', text: `${lead}\n${JSON.stringify(problem)}` }] };
  }
  return { isError: true, content: [{ type: 'text', text: `internal: the tool failed (${e instanceof Error ? e.message : String(e)}).` }] };
};

/**
 * The most base64 the PDFs of one request's answers carry together, in characters (a PDF of up to 192 MiB). The
 * transport writes a body's answers as one JSON string, and a V8 string stops at 2^29 - 24 characters (about 512 Mi):
 * past it, JSON.stringify threw inside the transport's send, which the protocol server only reports, and the call was
 * never answered (fifty finished PDFs of 8 MiB in one batch were enough). A PDF past the bound is a tool error.
 */
export const MAX_PDF_ANSWER_CHARS = 256 * 1024 * 1024;

/** One protocol server for one request, acting with `token` (stateless: nothing is shared between requests). */
const buildServer = (tools: readonly EsigTool[], esig: Esig, version: string): Server => {
  /** The base64 characters of the PDFs answered so far in this request. */
  let pdfChars = 0;
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
    // The arguments' shape is checked before anything is sent (`argumentsSchema`): what would break the API client (a
    // number for a string, a header value with a line break) is the caller's, not an internal, fault. The API's bounds
    // on values it checks itself, after the caller's scope, and logs, as for a direct call.
    const args = req.params.arguments ?? {};
    const validate = validators.get(tool) ?? validators.set(tool, ajv.compile(argumentsSchema(tool.inputSchema))).get(tool)!;
    if (!validate(args)) return { isError: true, content: [{ type: 'text', text: `validation_failed: ${describeArguments(validate.errors ?? [])}.` }] };
    try {
      const out = await tool.run(esig, args as Record<string, unknown>);
      if (out.kind === 'pdf') {
        const chars = Math.ceil(out.bytes.byteLength / 3) * 4;
        if (pdfChars + chars > MAX_PDF_ANSWER_CHARS) {
          const mib = (n: number) => `${Math.round((n / 4) * 3 / 1024 / 1024)} MiB`;
          const text =
            chars > MAX_PDF_ANSWER_CHARS
              ? `too_large: this PDF (${mib(chars)}) is more than one answer can carry as base64 (${mib(MAX_PDF_ANSWER_CHARS)}); download it from the REST API.`
              : `too_large: the PDFs answered in this request already come to ${mib(pdfChars)} of the ${mib(MAX_PDF_ANSWER_CHARS)} one request's answers can carry; ask for this one in a request of its own.`;
          return { isError: true, content: [{ type: 'text', text }] };
        }
        pdfChars += chars;
        return { content: [{ type: 'resource', resource: { uri: out.uri, mimeType: 'application/pdf', blob: Buffer.from(out.bytes).toString('base64') } }] };
      }
      return { structuredContent: out.data, content: [{ type: 'text', text: JSON.stringify(out.data) }] };
    } catch (e) {
      return problemText(e);
    }
  });
  return server;
};

/**
 * A `/mcp` request as the HTTP handler hands it over, once the caller is authenticated and its body read whole:
 * plain data, so that it can cross to a worker thread (the body's buffer is transferred, not copied).
 */
export interface McpCall {
  readonly method: string;
  /** The request's full URL (the transport reads nothing from it but its shape). */
  readonly url: string;
  /** The headers the transport reads (`MCP_HEADERS`), lower-case. */
  readonly headers: ReadonlyArray<readonly [string, string]>;
  /** The raw body, still encoded (UTF-8 JSON-RPC). */
  readonly body: Uint8Array;
  /** The caller's OAuth access token, already verified: the tools call the API with it. */
  readonly token: string;
  /** Where the tools reach the REST API. */
  readonly apiBaseUrl: string;
  readonly version: string;
}

/** The request headers the SDK's transport reads: nothing else is handed over. */
export const MCP_HEADERS: readonly string[] = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'];

/** The answer to an `McpCall`, as plain data. */
export interface McpAnswer {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: Uint8Array;
}

const jsonAnswer = (status: number, body: unknown): McpAnswer => ({
  status,
  headers: [['content-type', 'application/json']],
  body: new TextEncoder().encode(JSON.stringify(body)),
});

/**
 * The most JSON values (counted by the commas, brackets and braces outside strings) a body may hold. A real call has a
 * few dozen (the largest argument is 20 document ids) and a batch at most 100 calls; the largest body, an upload,
 * is one long string. A body's cost on the thread grows with its values, not its bytes: 20 MiB of one-character
 * members (1.9 million) took about 35 s to parse, screen, parse again (the SDK) and validate, against 0.2 s for an
 * upload of the same size, and every other caller's calls waited behind it on the thread.
 */
export const MAX_JSON_VALUES = 20_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** True when `bytes` holds more than `max` JSON values. Linear, and a string is skipped by indexOf (an upload's base64 at once). */
export const tooManyJsonValues = (bytes: Uint8Array, max: number = MAX_JSON_VALUES): boolean => {
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      // The closing quote is the first one not escaped: preceded by an even number of backslashes.
      for (let from = i + 1; ; ) {
        const q = bytes.indexOf(QUOTE, from);
        if (q === -1) return false; // unterminated: JSON.parse refuses it
        let k = q - 1;
        while (k > i && bytes[k] === BACKSLASH) k--;
        if ((q - 1 - k) % 2 === 0) {
          i = q;
          break;
        }
        from = q + 1;
      }
    } else if ((b === 0x2c || b === 0x5b || b === 0x7b) && ++n > max) return true;
  }
  return false;
};

/** The answer to a body that is not JSON, as body-parser's refusal was answered before. */
export const PARSE_ERROR = { jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null } as const;

/** The charset a Content-Type names, lower-cased (quotes taken off), or undefined when it names none. */
const charsetOf = (contentType: string | undefined): string | undefined => /;\s*charset\s*=\s*"?([^";\s]*)/i.exec(contentType ?? '')?.[1]?.toLowerCase();

/**
 * Answers one `/mcp` request: decodes and parses its body, screens its params, and runs the protocol server and
 * the SDK's web-standard transport (JSON responses, stateless) over it. Everything here grows with the body (a
 * PDF as base64 is up to 40 MiB of JSON to decode, parse and turn back into bytes; a finished PDF is turned into
 * base64 and JSON again), which is why the HTTP handler runs it on a worker thread, away from the API's event loop.
 * `fetch` is the API client's, when one is given (only on the calling thread: a function does not cross threads).
 */
export const answerMcp = async (call: McpCall, fetchFn?: typeof fetch): Promise<McpAnswer> => {
  let parsed: unknown = undefined;
  // A body of another type is left to the transport, which refuses it (415); the HTTP handler has not read it. The
  // test is the transport's own (the parsed media type, case-insensitive, parameters allowed): a JSON body this took
  // for another type went to the transport unscreened, which read it itself up to its own 4 MiB limit (413 for an
  // upload).
  const contentType = call.headers.find(([name]) => name === 'content-type')?.[1];
  const json = isJsonContentType(contentType);
  // JSON-RPC over HTTP is UTF-8 (RFC 8259 §8.1): a body said to be in another encoding would be read as UTF-8 anyway,
  // its text other than what the client meant. Refused, as the REST API refuses a charset it does not read.
  const charset = charsetOf(contentType);
  if (json && charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
    return jsonAnswer(415, { jsonrpc: '2.0', error: { code: -32000, message: `Unsupported Media Type: a JSON-RPC body is UTF-8, not ${charset}.` }, id: null });
  if (json && call.body.byteLength > 0) {
    if (tooManyJsonValues(call.body))
      return jsonAnswer(400, { jsonrpc: '2.0', error: { code: -32600, message: `Invalid Request: a body of more than ${MAX_JSON_VALUES} JSON values is not read.` }, id: null });
    try {
      parsed = JSON.parse(new TextDecoder().decode(call.body));
    } catch {
      return jsonAnswer(400, PARSE_ERROR);
    }
  }
  const esig = new Esig({ apiKey: call.token, baseUrl: call.apiBaseUrl, maxRetries: 0, ...(fetchFn ? { fetch: fetchFn } : {}) });
  const server = buildServer(TOOLS, esig, call.version);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // Invalid params are refused by us, as -32602 with a sentence: the SDK parses a request's params before any
  // handler of ours runs, and answers -32603 with its schema's issues as JSON (or -32700 for the whole body).
  // The refusal goes out between the transport, which has still checked the headers and the protocol version,
  // and the protocol server.
  const screened = parsed === undefined ? undefined : screenParams(parsed);
  try {
    await server.connect(transport);
    const dispatch = transport.onmessage;
    transport.onmessage = (message, extra) => {
      // Stateless, a cancellation can only name a request of this same body, and the JSON response waits for an
      // answer to each of them: the protocol server answers nothing for a cancelled request, so the call was never
      // answered (and what the HTTP adapter reserved for its body was held for good). The request is answered as if
      // it could not be cancelled, which the protocol allows.
      if (isJSONRPCNotification(message) && message.method === 'notifications/cancelled') return;
      if (screened !== undefined && isJSONRPCRequest(message)) {
        const problem = screened.refusals.get(message.id);
        if (problem !== undefined) return void transport.send(invalidParams(message.id, problem)).catch(() => undefined);
      }
      dispatch?.(message, extra);
    };
    // A JSON body is handed over parsed, and the request itself carries none (the transport reads it only when no
    // parsed body is given).
    let request: Request;
    try {
      request = new Request(call.url, {
        method: call.method,
        headers: call.headers as [string, string][],
        ...(screened === undefined && call.body.byteLength > 0 ? { body: call.body } : {}),
      });
    } catch {
      // A header value fetch's Headers refuses (Node's HTTP parser is more lenient): the caller's fault.
      return jsonAnswer(400, { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid Request: a header could not be read.' }, id: null });
    }
    const response = await transport.handleRequest(request, screened === undefined ? {} : { parsedBody: screened.body });
    return { status: response.status, headers: [...response.headers.entries()], body: new Uint8Array(await response.arrayBuffer()) };
  } finally {
    void transport.close();
    void server.close();
  }
};
