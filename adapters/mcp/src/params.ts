import type { JSONRPCErrorResponse, RequestId } from '@modelcontextprotocol/sdk/types.js';
import { CallToolRequestSchema, ErrorCode, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const kind = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);

/** The requests this server answers, by the schema the SDK parses their params with before our handlers run. */
const SCHEMAS: Readonly<Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: ReadonlyArray<{ path: ReadonlyArray<PropertyKey>; message: string }> } } }>> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
  initialize: InitializeRequestSchema,
  ping: PingRequestSchema,
};

/**
 * What is wrong with a request's `params`, in a sentence, or null. The SDK answers a `params` that is not an
 * object with a 400 "Parse error" (-32700) for the whole body, although it parsed, and params its schema refuses
 * with an internal error (-32603) whose message is the schema's issues as JSON; both are the caller's invalid
 * params (-32602), and a caller should read which one and why.
 */
export const paramsProblem = (method: string, params: unknown): string | null => {
  const call = method === 'tools/call';
  if (params !== undefined && !isObject(params)) return `params must be an object ${call ? 'with the tool’s name and arguments' : '(or left out)'}, not ${kind(params)}.`;
  if (call) {
    if (params === undefined) return 'params must be an object with the tool’s name and arguments; it is missing.';
    if (typeof params.name !== 'string') return `params.name must be the name of a tool, a string${params.name === undefined ? '; it is missing' : `, not ${kind(params.name)}`}.`;
    if (params.arguments !== undefined && !isObject(params.arguments)) return `params.arguments must be an object of the tool’s arguments (or left out), not ${kind(params.arguments)}.`;
  }
  const schema = SCHEMAS[method];
  const parsed = schema?.safeParse(params === undefined ? { method } : { method, params });
  const issue = parsed?.success === false ? parsed.error?.issues[0] : undefined;
  if (issue === undefined) return null;
  const path = issue.path.map(String).join('.') || 'params';
  const said = issue.message.replace(/^Invalid input: /, '');
  return said.endsWith('received undefined') ? `${path} is missing (${said.replace(/, received undefined$/, '')}).` : `${path} is not valid (${said}).`;
};

const isRequestId = (v: unknown): v is RequestId => typeof v === 'string' || (typeof v === 'number' && Number.isInteger(v));

/**
 * Checks every request of a JSON-RPC body (one message or a batch) with `paramsProblem`. Returns the refusals
 * by request id, and the body to hand to the SDK's transport: unchanged, except that a refused request loses its
 * `params` (the transport's own schema refuses some of them, a `params` or a `_meta` that is not an object, for the
 * whole body), so that the transport takes the body and the refusal is answered by id beside the other requests
 * of a batch.
 */
export const screenParams = (body: unknown): { readonly body: unknown; readonly refusals: ReadonlyMap<RequestId, string> } => {
  const refusals = new Map<RequestId, string>();
  const screen = (m: unknown): unknown => {
    if (!isObject(m) || typeof m.method !== 'string' || !isRequestId(m.id)) return m;
    const problem = paramsProblem(m.method, m.params);
    if (problem === null) return m;
    refusals.set(m.id, problem);
    const { params: _dropped, ...rest } = m;
    return rest;
  };
  return { body: Array.isArray(body) ? body.map(screen) : screen(body), refusals };
};

/** The answer to a request `screenParams` refused. */
export const invalidParams = (id: RequestId, problem: string): JSONRPCErrorResponse => ({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: `Invalid params: ${problem}` } });
