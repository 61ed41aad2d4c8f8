import type * as t from 'io-ts';
import { API_SCOPES, OAUTH_SCOPES } from '@esig/core';
import * as c from './codecs.js';
import * as E from 'fp-ts/lib/Either.js';
import { exampleOf, problemExample } from './examples.js';
import type { ProblemCode } from './problem.js';
import { PROBLEMS } from './problem.js';
import type { AnySignerRoute, ResponseSpec, Route, RouteErrors } from './route.js';
import type { JsonSchema } from './schema.js';
import { toJsonSchema } from './schema.js';
import { oauthEndpoints } from './oauth-routes.js';

/** Codecs shown as named components (and referenced), so generated clients get proper type names. */
const COMPONENTS: ReadonlyArray<readonly [string, t.Mixed]> = [
  ['Document', c.DocumentResource],
  ['Recipient', c.RecipientResource],
  ['Field', c.FieldResource],
  ['SignatureRequest', c.SignatureRequestResource],
  ['CertificateData', c.CertificateDataResource],
  ['ApiKey', c.ApiKeyResource],
  ['CreatedApiKey', c.CreatedApiKeyResource],
  ['Event', c.EventResource],
  ['TestMail', c.StoredMailResource],
  ['WebhookEndpoint', c.WebhookEndpointResource],
  ['CreatedWebhookEndpoint', c.CreatedWebhookEndpointResource],
  ['RotatedSecret', c.RotatedSecretResource],
  ['EmbeddedSession', c.EmbeddedSessionResource],
  ['WebhookDelivery', c.WebhookDeliveryResource],
  ['DeliveryAttempt', c.DeliveryAttemptResource],
  ['LogEntry', c.ApiLogResource],
  ['PageInfo', c.PageInfo],
  ['Problem', c.Problem],
  ['SignerView', c.SignerViewResource],
  ['OtpSent', c.OtpSentResource],
];

const TAGS: Readonly<Record<string, string>> = {
  Documents: 'Upload PDFs and read them back.',
  'Signature requests': 'Draft a request over uploaded documents, add recipients and fields, send it, track it, fetch the finished PDF and the evidence certificate.',
  Webhooks: 'Signed webhook endpoints, their delivery log, rotation and resends.',
  Events: 'The event log, to reconcile by polling.',
  Logs: 'The request log of API and webhook calls.',
  'API keys': 'Scoped API keys of the caller’s organization and mode.',
  'Test mode': 'What test mode keeps instead of sending.',
};

const SIGNING_LINK_AUTH =
  'The signing link’s token, the last path segment of `ESIG_PUBLIC_URL/sign/<token>`, is the only credential: ' +
  'no API key is needed. OpenAPI security schemes cannot name a path segment, so these operations declare ' +
  '`security: []` (no header) and carry the credential as their `token` path parameter (`x-authentication: signing-link`).';

/** Every parameter is described here, by name: a new one without a description stops the document from building. */
const PARAMETERS: Readonly<Record<string, string>> = {
  documentId: 'The document’s id (`doc_…`).',
  requestId: 'The signature request’s id (`req_…`).',
  recipientId: 'The recipient’s id (`rcp_…`).',
  endpointId: 'The webhook endpoint’s id (`whe_…`); as a query parameter, only that endpoint’s deliveries.',
  deliveryId: 'The delivery’s id (`dlv_…`).',
  keyId: 'The API key’s id (`key_…`).',
  token: 'The signing link’s token: the credential of this call.',
  limit: 'Page size from 1 to 100 (default 25); anything else is refused, never clamped.',
  order: '`desc` (newest first, the default) or `asc`.',
  cursor: 'The previous page’s `pageInfo.nextCursor`, passed on unchanged.',
  status: 'Only entries in this status.',
  type: 'Only events of this type.',
  kind: 'Only API calls (`api`) or only webhook calls (`webhook`).',
  to: 'Only mail to this address.',
  eventId: 'Only deliveries of this event.',
  name: 'The document’s name, for a raw `application/pdf` upload (a multipart upload sends it as the `name` field).',
};
const describeParameter = (name: string): string => {
  const d = PARAMETERS[name];
  if (d === undefined) throw new Error(`OpenAPI: no description for parameter ${name}; add it to PARAMETERS`);
  return d;
};

const header = (description: string, schema: JsonSchema, required = true) => ({ description, required, schema });
/** What every response carries (the rate-limit headers are set before any route runs). */
const COMMON_HEADERS = {
  'X-Request-Id': header('This request’s id (`log_…`), as in the request log and in problem bodies.', { type: 'string' }),
  'X-RateLimit-Limit': header('Calls allowed in the window, for the tighter of the key’s and the organization’s budgets.', { type: 'integer' }),
  'X-RateLimit-Remaining': header('Calls left in the window.', { type: 'integer' }),
  'X-RateLimit-Reset': header('Seconds until the window frees a call.', { type: 'integer' }),
};
const RETRY_AFTER = { 'Retry-After': header('Seconds to wait before calling again.', { type: 'integer' }) };
const IDEMPOTENCY_KEY = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'Makes the call safe to repeat: 1–255 printable ASCII characters, kept 24 h. The same key with the same request returns the stored response.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const REPLAYED = { 'Idempotency-Replayed': header('`true` when this is the stored response of an earlier call with the same Idempotency-Key.', { type: 'string', enum: ['true'] }, false) };

interface ProblemCase {
  readonly code: ProblemCode;
  readonly when: string;
}

/** What any route taking an API key may answer, besides its own `errors`. */
const keyRouteProblems = (r: Route): ProblemCase[] => {
  const write = r.kind === 'write';
  const hasInput = write || r.params !== undefined || r.query !== undefined || r.body !== undefined;
  return [
    ...(hasInput ? [{ code: 'validation_failed' as const, when: 'a path, query, header or body value is invalid; `errors` names each' }] : []),
    { code: 'unauthenticated', when: 'no API key, or an unknown or revoked one' },
    { code: 'insufficient_scope', when: `the key lacks the scope ${r.scope}` },
    ...(r.params !== undefined ? [{ code: 'not_found' as const, when: 'no such resource in this organization and mode' }] : []),
    ...(write
      ? [
          { code: 'request_timeout' as const, when: 'the body did not arrive in time' },
          { code: 'invalid_state' as const, when: 'not allowed in the resource’s current state, or changed by a concurrent call' },
          { code: 'idempotency_in_progress' as const, when: 'a call with the same Idempotency-Key is still running; retry shortly' },
          { code: 'payload_too_large' as const, when: 'the body is over the limit' },
          { code: 'unsupported_media_type' as const, when: 'a Content-Type this route does not take' },
          { code: 'idempotency_key_reused' as const, when: 'the Idempotency-Key was used for a different request' },
        ]
      : []),
    { code: 'rate_limited', when: 'over the rate limit; wait `Retry-After` seconds' },
    { code: 'internal', when: 'a fault on the server’s side; quote `requestId`' },
  ];
};

/** What any signer route may answer, besides its own `errors`. */
const signerRouteProblems = (r: AnySignerRoute): ProblemCase[] => [
  ...(r.body !== undefined ? [{ code: 'validation_failed' as const, when: 'the body is invalid (or, for authenticate, the code is wrong)' }] : []),
  { code: 'not_found', when: 'no such signing link (an ill-formed token included), or no such document' },
  ...(r.body !== undefined ? [{ code: 'request_timeout' as const, when: 'the body did not arrive in time' }] : []),
  {
    code: 'invalid_state',
    when: 'not allowed in the current state (already signed, not your turn, request ended, identification pending or locked)',
  },
  ...(r.body !== undefined
    ? [
        { code: 'payload_too_large' as const, when: 'the body is over the limit' },
        { code: 'unsupported_media_type' as const, when: 'a Content-Type other than application/json' },
      ]
    : []),
  ...(r.write !== undefined
    ? [
        { code: 'idempotency_in_progress' as const, when: 'a call with the same Idempotency-Key is still running; retry shortly' },
        { code: 'idempotency_key_reused' as const, when: 'this link used the Idempotency-Key for a different request' },
      ]
    : []),
  { code: 'rate_limited', when: 'over the rate limit; calls without an API key are counted per client address' },
  { code: 'internal', when: 'a fault on the server’s side; quote `requestId`' },
];

const routeProblems = (errors: RouteErrors | undefined): ProblemCase[] =>
  Object.entries(errors ?? {}).map(([code, when]) => ({ code: code as ProblemCode, when: when! }));

/** The OpenAPI 3.1 document, generated from the route table and the same io-ts codecs that validate requests. */
export const buildOpenApi = (routes: readonly Route[], signerRoutes: readonly AnySignerRoute[], publicUrl: string): JsonSchema => {
  const named = new Map<t.Mixed, string>(COMPONENTS.map(([n, codec]) => [codec, n]));
  const schemas: Record<string, JsonSchema> = {};
  for (const [n, codec] of COMPONENTS) schemas[n] = toJsonSchema(codec, new Map([...named].filter(([k]) => k !== codec)));
  const problemRef = { $ref: '#/components/schemas/Problem' };

  const paths: Record<string, Record<string, unknown>> = {};
  const addOperation = (path: string, method: string, operation: Record<string, unknown>) => {
    paths[path] = { ...(paths[path] ?? {}), [method]: operation };
  };
  const pathParameters = (params: Record<string, t.Mixed>) =>
    Object.entries(params).map(([name, codec]) => ({ name, in: 'path', required: true, description: describeParameter(name), schema: toJsonSchema(codec, named) }));
  const jsonContent = (codec: t.Mixed) => ({ 'application/json': { schema: toJsonSchema(codec, named), example: exampleOf(codec) } });
  const jsonBody = (codec: t.Mixed, required: boolean) => ({ required, content: jsonContent(codec) });
  const success = (r: ResponseSpec, headers: Record<string, unknown>) => ({
    [String(r.status)]: {
      description: r.description,
      headers,
      content: r.codec
        ? jsonContent(r.codec)
        : {
            [r.contentType ?? 'application/octet-stream']: { schema: { type: 'string', format: 'binary' } },
            ...(r.json ? jsonContent(r.json) : {}),
          },
    },
  });
  /** One response per status; each code it stands for is named in the description and shown as an example. */
  const problems = (cases: readonly ProblemCase[]) => {
    const byStatus = new Map<string, ProblemCase[]>();
    for (const p of cases) {
      const status = String(PROBLEMS[p.code].status);
      const same = byStatus.get(status) ?? [];
      if (!same.some((x) => x.code === p.code)) byStatus.set(status, [...same, p]);
      else byStatus.set(status, same.map((x) => (x.code === p.code ? { ...x, when: `${x.when}; or ${p.when}` } : x)));
    }
    return Object.fromEntries(
      [...byStatus].map(([status, list]) => [
        status,
        {
          description: list.map((p) => `\`${p.code}\`: ${p.when}`).join('; '),
          headers: list.some((p) => p.code === 'rate_limited' || p.code === 'server_busy') ? { ...COMMON_HEADERS, ...RETRY_AFTER } : COMMON_HEADERS,
          content: {
            'application/problem+json': {
              schema: problemRef,
              examples: Object.fromEntries(list.map((p) => [p.code, { summary: p.when, value: problemExample(p.code) }])),
            },
          },
        },
      ]),
    );
  };
  const sortByStatus = (responses: Record<string, unknown>) => Object.fromEntries(Object.entries(responses).sort(([a], [b]) => a.localeCompare(b)));

  for (const r of routes) {
    const parameters: unknown[] = pathParameters(r.params ?? {});
    if (r.query && r.query !== undefined) {
      const q = toJsonSchema(r.query as t.Mixed, named) as { properties?: Record<string, JsonSchema> };
      for (const [name, schema] of Object.entries(q.properties ?? {})) parameters.push({ name, in: 'query', required: false, description: describeParameter(name), schema });
    }
    if (r.kind === 'write') parameters.push(IDEMPOTENCY_KEY);

    const requestBody =
      r.body === 'pdf'
        ? {
            required: true,
            content: {
              'application/pdf': { schema: { type: 'string', format: 'binary' } },
              'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', format: 'binary' }, name: { type: 'string' } }, required: ['file'] } },
            },
          }
        : r.body
          ? jsonBody(r.body as t.Mixed, !r.emptyBodyAllowed)
          : undefined;

    addOperation(r.path, r.method, {
      operationId: r.operationId,
      summary: r.summary,
      tags: [r.tag],
      // An OAuth access token is taken wherever an API key is, within its grant's scopes; no grant carries some of them.
      security: (OAUTH_SCOPES as readonly string[]).includes(r.scope) ? [{ apiKey: [r.scope] }, { oauth2: [r.scope] }] : [{ apiKey: [r.scope] }],
      'x-required-scope': r.scope,
      parameters,
      ...(requestBody ? { requestBody } : {}),
      responses: sortByStatus({
        ...success(r.response, r.kind === 'write' ? { ...COMMON_HEADERS, ...REPLAYED } : COMMON_HEADERS),
        ...problems([...keyRouteProblems(r), ...routeProblems(r.errors)]),
      }),
    });
  }

  for (const r of signerRoutes) {
    const body = r.body as t.Mixed | undefined;
    addOperation(r.path, r.method, {
      operationId: r.operationId,
      summary: r.summary,
      tags: ['Signing'],
      security: [],
      'x-authentication': 'signing-link',
      parameters: [...pathParameters({ token: c.SigningToken, ...(r.params ?? {}) }), ...(r.write !== undefined ? [IDEMPOTENCY_KEY] : [])],
      // A missing body counts as `{}`, so the body is optional exactly where the codec accepts `{}`.
      ...(body ? { requestBody: jsonBody(body, E.isLeft(body.decode({}))) } : {}),
      responses: sortByStatus({
        ...success(r.response, r.write !== undefined ? { ...COMMON_HEADERS, ...REPLAYED } : COMMON_HEADERS),
        ...problems([...signerRouteProblems(r), ...routeProblems(r.errors)]),
      }),
    });
  }

  const used = [...new Set(routes.map((r) => r.tag))];
  for (const tag of used) if (TAGS[tag] === undefined) throw new Error(`OpenAPI: no description for tag ${tag}; add it to TAGS`);

  return {
    openapi: '3.1.0',
    info: {
      title: 'esig API',
      version: '1.0.0',
      description: 'Electronic signatures: upload documents, add recipients and fields, send, track, fetch the results.',
      license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
    },
    servers: [{ url: publicUrl, description: 'This server (`ESIG_PUBLIC_URL`).' }],
    security: [{ apiKey: [] }, { oauth2: [] }],
    tags: [...used.map((name) => ({ name, description: TAGS[name] })), { name: 'Signing', description: `The signer API behind the signing page. ${SIGNING_LINK_AUTH}` }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: `API key (esig_test_… or esig_live_…). Scopes: ${API_SCOPES.join(', ')}, or *.` },
        oauth2: {
          type: 'oauth2',
          description:
            'An OAuth access token (esig_oat_…), sent as `Authorization: Bearer`: from the authorization server the tool server uses (public clients, PKCE S256, `resource` = `<server>/mcp`). It acts for the API key that consented, within the scopes its grant holds; no grant holds api_keys:write.',
          flows: {
            authorizationCode: {
              // As the authorization server's metadata names them.
              authorizationUrl: oauthEndpoints(publicUrl).authorization,
              tokenUrl: oauthEndpoints(publicUrl).token,
              refreshUrl: oauthEndpoints(publicUrl).token,
              scopes: Object.fromEntries(OAUTH_SCOPES.map((s) => [s, `The API's ${s} scope.`])),
            },
          },
        },
      },
    },
  };
};
