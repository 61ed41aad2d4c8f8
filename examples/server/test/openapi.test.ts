import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let spec: any;
beforeAll(async () => {
  s = await startTestServer();
  spec = (await s.call('GET', '/api/v1/openapi.json', { key: null })).body;
});
afterAll(async () => s.close());

/** The signer API (docs/signer-api.md): every route it answers, by method and documented path. */
const SIGNER_OPS = [
  'GET /api/v1/signing/{token}', 'GET /api/v1/signing/{token}/documents/{documentId}', 'GET /api/v1/signing/{token}/document',
  'POST /api/v1/signing/{token}/view', 'POST /api/v1/signing/{token}/sign', 'POST /api/v1/signing/{token}/decline',
  'POST /api/v1/signing/{token}/otp', 'POST /api/v1/signing/{token}/authenticate',
];
/** Well-formed, but no link has it: a call that passes validation reaches the use case and is answered this 404. */
const UNKNOWN_TOKEN = 'Q'.repeat(43);
const UNKNOWN_LINK = 'No signing link given.';

const refsIn = (x: unknown): string[] =>
  x === null || typeof x !== 'object' ? [] : Object.entries(x).flatMap(([k, v]) => (k === '$ref' && typeof v === 'string' ? [v] : refsIn(v)));

describe('the OpenAPI document', () => {
  it('describes every route the server answers, with its scope, parameters and errors', async () => {
    const ops = Object.entries(spec.paths).flatMap(([path, methods]: [string, any]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${path}`));
    expect(ops.sort()).toEqual(
      [
        'POST /api/v1/documents', 'GET /api/v1/documents', 'GET /api/v1/documents/{documentId}', 'GET /api/v1/documents/{documentId}/content',
        'POST /api/v1/signature-requests', 'GET /api/v1/signature-requests', 'GET /api/v1/signature-requests/{requestId}',
        'POST /api/v1/signature-requests/{requestId}/recipients', 'POST /api/v1/signature-requests/{requestId}/fields',
        'POST /api/v1/signature-requests/{requestId}/send', 'POST /api/v1/signature-requests/{requestId}/cancel',
        'POST /api/v1/signature-requests/{requestId}/remind', 'GET /api/v1/signature-requests/{requestId}/document',
        'POST /api/v1/signature-requests/{requestId}/recipients/{recipientId}/embedded-sessions',
        'GET /api/v1/signature-requests/{requestId}/certificate', 'GET /api/v1/test-mailbox',
        'POST /api/v1/webhooks/endpoints', 'GET /api/v1/webhooks/endpoints', 'GET /api/v1/webhooks/endpoints/{endpointId}',
        'PATCH /api/v1/webhooks/endpoints/{endpointId}', 'DELETE /api/v1/webhooks/endpoints/{endpointId}',
        'POST /api/v1/webhooks/endpoints/{endpointId}/rotate-secret', 'POST /api/v1/webhooks/endpoints/{endpointId}/test',
        'GET /api/v1/webhooks/deliveries', 'POST /api/v1/webhooks/deliveries/{deliveryId}/resend', 'GET /api/v1/logs',
        'GET /api/v1/events', 'POST /api/v1/api-keys', 'GET /api/v1/api-keys', 'DELETE /api/v1/api-keys/{keyId}',
        ...SIGNER_OPS,
      ].sort(),
    );
    for (const [path, methods] of Object.entries<any>(spec.paths)) {
      for (const [method, op] of Object.entries<any>(methods)) {
        expect(op.operationId).toMatch(/^[a-z][A-Za-z]+$/);
        if (path.startsWith('/api/v1/signing/')) continue; // the signer API has no key; see below

        expect(op['x-required-scope']).toMatch(/^[a-z_]+:(read|write)$/);
        expect(op.responses['401'].content['application/problem+json']).toBeDefined();
        const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        expect(op.parameters.filter((p: any) => p.in === 'path').map((p: any) => p.name)).toEqual(pathParams);
        if (method !== 'get') expect(op.parameters.some((p: any) => p.name === 'Idempotency-Key')).toBe(true);
      }
    }
  });

  it('names both credentials the API takes: an API key, and an OAuth access token within its grant’s scopes', async () => {
    const { oauth2 } = spec.components.securitySchemes;
    // The endpoints and the scopes a grant can hold are those the authorization server's metadata (RFC 8414) lists.
    const meta = (await s.call('GET', '/.well-known/oauth-authorization-server', { key: null })).body;
    expect(oauth2.flows.authorizationCode).toMatchObject({ authorizationUrl: meta.authorization_endpoint, tokenUrl: meta.token_endpoint, refreshUrl: meta.token_endpoint });
    expect(Object.keys(oauth2.flows.authorizationCode.scopes).sort()).toEqual([...meta.scopes_supported].sort());
    for (const [path, methods] of Object.entries<any>(spec.paths)) {
      if (path.startsWith('/api/v1/signing/')) continue;
      for (const op of Object.values<any>(methods)) {
        const scope = op['x-required-scope'];
        expect(op.security, `${path} ${scope}`).toEqual(meta.scopes_supported.includes(scope) ? [{ apiKey: [scope] }, { oauth2: [scope] }] : [{ apiKey: [scope] }]);
      }
    }
    // That the server takes an access token where an API key is, and no grant holds api_keys:write: mcp.test.ts.
    expect(meta.scopes_supported).not.toContain('api_keys:write');
  });

  it('comes from the validating codecs: limits, enums and required fields match what the server enforces', async () => {
    const list = spec.paths['/api/v1/documents'].get.parameters;
    expect(list.find((p: any) => p.name === 'limit').schema).toEqual({ type: 'integer', minimum: 1, maximum: 100, default: 25 });
    expect(list.find((p: any) => p.name === 'order').schema.enum).toEqual(['asc', 'desc']);
    const create = spec.paths['/api/v1/signature-requests'].post.requestBody.content['application/json'].schema;
    expect(create.required).toEqual(['title', 'documentIds']);
    expect(create.additionalProperties).toBe(false);
    expect(create.properties.documentIds).toMatchObject({ type: 'array', minItems: 1, maxItems: 20 });
    const fields = spec.paths['/api/v1/signature-requests/{requestId}/fields'].post.requestBody.content['application/json'].schema;
    expect(fields.properties.type.enum).toEqual(['signature', 'initials', 'date_signed', 'text', 'checkbox', 'name', 'email']);
  });

  it('resolves every $ref to a component', () => {
    for (const ref of refsIn(spec)) {
      const name = ref.replace('#/components/schemas/', '');
      expect(spec.components.schemas[name], ref).toBeDefined();
    }
    expect(Object.keys(spec.components.schemas)).toEqual(expect.arrayContaining(['Document', 'SignatureRequest', 'Problem', 'PageInfo']));
  });

  it('matches real responses: every key a response has is in its schema', async () => {
    const { req } = await s.draftReady();
    const got = (await s.call('GET', `/api/v1/signature-requests/${req.id}`)).body;
    const schema = spec.components.schemas.SignatureRequest;
    expect(Object.keys(got).sort()).toEqual(Object.keys(schema.properties).sort());
    expect(Object.keys(got.recipients[0]).sort()).toEqual(Object.keys(spec.components.schemas.Recipient.properties).sort());
  });
});

// ---- The signer API: the document against what the routes do ----------------------------------------

const signerOps = () =>
  Object.entries<any>(spec.paths)
    .filter(([path]) => path.startsWith('/api/v1/signing/'))
    .flatMap(([path, methods]) => Object.entries<any>(methods).map(([method, op]) => ({ path, method, op })));
const resolve = (schema: any): any => (schema?.$ref ? spec.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema);
const kindOf = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);

/** Whether a value satisfies a JSON Schema, for the keywords the generated document uses (no validator library in the tree). */
const satisfies = (schema: any, v: any): boolean => {
  const s = resolve(schema);
  if (s.anyOf && !s.anyOf.some((x: any) => satisfies(x, v))) return false;
  if (s.allOf && !s.allOf.every((x: any) => satisfies(x, v))) return false;
  if ('const' in s && v !== s.const) return false;
  if (s.enum && !s.enum.includes(v)) return false;
  if (s.type !== undefined && !(kindOf(v) === s.type || (s.type === 'number' && kindOf(v) === 'integer'))) return false;
  if (typeof v === 'string') {
    const n = [...v].length;
    if ((s.minLength !== undefined && n < s.minLength) || (s.maxLength !== undefined && n > s.maxLength)) return false;
    if (s.pattern !== undefined && !new RegExp(s.pattern, 'u').test(v)) return false;
  }
  if (typeof v === 'number') {
    if ((s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum)) return false;
    if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) return false;
  }
  if (Array.isArray(v)) {
    if ((s.minItems !== undefined && v.length < s.minItems) || (s.maxItems !== undefined && v.length > s.maxItems)) return false;
    if (s.items && !v.every((x) => satisfies(s.items, x))) return false;
  }
  if (kindOf(v) === 'object') {
    if (!(s.required ?? []).every((k: string) => k in v)) return false;
    if (s.maxProperties !== undefined && Object.keys(v).length > s.maxProperties) return false;
    for (const [k, x] of Object.entries(v)) {
      if (s.propertyNames && !satisfies(s.propertyNames, k)) return false;
      const patterns = Object.entries<any>(s.patternProperties ?? {}).filter(([p]) => new RegExp(p, 'u').test(k));
      if (!patterns.every(([, p]) => satisfies(p, x))) return false;
      if (s.properties && k in s.properties) {
        if (!satisfies(s.properties[k], x)) return false;
      } else if (patterns.length === 0 && (s.additionalProperties === false || (typeof s.additionalProperties === 'object' && !satisfies(s.additionalProperties, x)))) return false;
    }
  }
  return true;
};

/** The smallest value the schema describes. */
const example = (schema: any): unknown => {
  const s = resolve(schema);
  if (s.anyOf) return example(s.anyOf[0]);
  if ('const' in s) return s.const;
  if (s.enum) return s.enum[0];
  switch (s.type) {
    case 'string': return 'a'.repeat(Math.max(s.minLength ?? 0, 1));
    case 'boolean': return true;
    case 'integer': case 'number': return s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : 1);
    case 'array': return Array.from({ length: s.minItems ?? 0 }, () => example(s.items));
    case 'object': return Object.fromEntries((s.required ?? []).map((k: string) => [k, example(s.properties[k])]));
    default: return null;
  }
};

/** Values near `v`, each changing one thing: wrong types, enum members and non-members, each length bound and one past it, missing and unknown keys. */
const variants = (schema: any, v: unknown): unknown[] => {
  const s = resolve(schema);
  const out: unknown[] = [42, 1.5, 'x', true, null, [], {}];
  for (const branch of s.anyOf ?? []) out.push(...variants(branch, example(branch)));
  if (s.enum) out.push(...s.enum, `${s.enum[0]}_not`);
  if (s.type === 'string') {
    if (s.minLength) out.push('a'.repeat(s.minLength - 1), 'a'.repeat(s.minLength));
    if (s.maxLength !== undefined) out.push('a'.repeat(s.maxLength), 'a'.repeat(s.maxLength + 1));
  }
  if (s.type === 'object' && kindOf(v) === 'object') {
    const obj = v as Record<string, unknown>;
    for (const [k, prop] of Object.entries<any>(s.properties ?? {})) {
      const { [k]: _dropped, ...without } = obj;
      out.push(without);
      const current = k in obj ? obj[k] : example(prop);
      for (const x of [current, ...variants(prop, current)]) out.push({ ...obj, [k]: x });
    }
    out.push({ ...obj, notAField: 'x' });
    // Maps (`values` of sign): keys of every length around the documented bounds, each with a good and a bad value.
    for (const valueSchema of [...Object.values<any>(s.patternProperties ?? {}), ...(typeof s.additionalProperties === 'object' ? [s.additionalProperties] : [])]) {
      const value = example(valueSchema);
      const keys = ['', 'k', 'fld_01', 'k'.repeat(40), 'k'.repeat(41), 'k'.repeat(300)];
      // And around the documented key bounds, wherever they are.
      const names = resolve(s.propertyNames ?? {});
      if (names.minLength) keys.push('k'.repeat(names.minLength - 1), 'k'.repeat(names.minLength));
      if (names.maxLength !== undefined) keys.push('k'.repeat(names.maxLength), 'k'.repeat(names.maxLength + 1));
      for (const k of keys) out.push({ ...obj, [k]: value }, { ...obj, [k]: { not: 'a value' } });
      for (const x of variants(valueSchema, value)) out.push({ ...obj, k: x });
    }
  }
  return out;
};

/** Keys a response has that its schema does not list, by path. */
const undocumentedKeys = (schema: any, v: any, at = ''): string[] => {
  const s = resolve(schema);
  if (Array.isArray(v)) return v.flatMap((x, i) => undocumentedKeys(s.items ?? {}, x, `${at}[${i}]`));
  if (kindOf(v) !== 'object' || !s.properties) return [];
  return Object.entries(v).flatMap(([k, x]) => (k in s.properties ? undocumentedKeys(s.properties[k], x, `${at}.${k}`) : [`${at}.${k}`]));
};

const signerCall = (method: string, path: string, body?: string, headers: Record<string, string> = {}) =>
  s.call(method, path.replace('{token}', UNKNOWN_TOKEN).replace('{documentId}', 'doc_00000000000000000000000000'), { key: null, body, headers });

describe('the signer API in the OpenAPI document', () => {
  it('lists every signer route with the link token as its only credential, and the problems it answers', () => {
    expect(signerOps().map(({ path, method }) => `${method.toUpperCase()} ${path}`).sort()).toEqual([...SIGNER_OPS].sort());
    expect(spec.tags.find((t: any) => t.name === 'Signing').description).toMatch(/token/);
    for (const { path, method, op } of signerOps()) {
      expect(op.tags).toEqual(['Signing']);
      expect(op.security, path).toEqual([]); // no API key: the global apiKey requirement does not apply
      expect(op['x-authentication']).toBe('signing-link');
      expect(op['x-required-scope']).toBeUndefined();
      expect(op.responses['401']).toBeUndefined();
      expect(op.responses['403']).toBeUndefined();
      const pathParams = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
      // The writes that run under a key say so (otp takes none: each call mails a new code).
      const keyed = method === 'post' && !path.endsWith('/otp');
      expect(op.parameters.map((p: any) => `${p.in}:${p.name}`), path).toEqual([...pathParams.map((n) => `path:${n}`), ...(keyed ? ['header:Idempotency-Key'] : [])]);
      expect(op.responses['422'] !== undefined, path).toBe(keyed);
      expect(op.responses['200']?.headers?.['Idempotency-Replayed'] !== undefined, path).toBe(keyed);
      expect(op.parameters[0]).toMatchObject({ name: 'token', required: true, schema: { type: 'string', minLength: 43, maxLength: 128, pattern: '^[A-Za-z0-9]+$' } });
      const problems = method === 'post' ? ['400', '404', '409', '413', '415', '429'] : ['404', '409', '429'];
      for (const status of problems) expect(op.responses[status]?.content['application/problem+json'].schema, `${path} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
      expect(method === 'post').toBe(op.requestBody !== undefined);
    }
    expect(spec.paths['/api/v1/signing/{token}/otp'].post.responses['503']).toBeDefined();
    expect(spec.paths['/api/v1/signing/{token}'].get.responses['200'].content['application/json'].schema).toEqual({ $ref: '#/components/schemas/SignerView' });
  });

  it('has every documented signer operation answered by the server (an unknown link, never an unknown route)', async () => {
    for (const { path, method, op } of signerOps()) {
      const body = op.requestBody ? JSON.stringify(example(op.requestBody.content['application/json'].schema)) : undefined;
      const r = await signerCall(method.toUpperCase(), path, body);
      expect([r.status, r.body.detail], `${method} ${path}`).toEqual([404, UNKNOWN_LINK]);
      expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      // An ill-formed token is documented as 404 too, not as a validation failure.
      const bad = await s.call(method.toUpperCase(), path.replace('{token}', 'short').replace('{documentId}', 'doc_x'), { key: null, body });
      expect([bad.status, bad.body.detail]).toEqual([404, UNKNOWN_LINK]);
      if (op.requestBody) expect((await signerCall('POST', path, body, { 'content-type': 'text/plain' })).status).toBe(415);
    }
  });

  it('refuses with 400 exactly the bodies its documented request schema refuses', async () => {
    let checked = 0;
    for (const { path, op } of signerOps().filter((o) => o.op.requestBody)) {
      const schema = op.requestBody.content['application/json'].schema;
      const valid = example(schema);
      expect(satisfies(schema, valid), `example for ${path}`).toBe(true);
      const cases = [...new Set([valid, ...variants(schema, valid)].map((b) => JSON.stringify(b)))];
      const verdicts = { accepted: 0, refused: 0 };
      for (const body of cases) {
        const documentedValid = satisfies(schema, JSON.parse(body));
        verdicts[documentedValid ? 'accepted' : 'refused']++;
        const r = await signerCall('POST', path, body);
        // Past validation the use case looks the token up: 404. Refused by validation: 400 validation_failed.
        expect([r.status, r.body.code], `${path} ${body.slice(0, 200)}`).toEqual(documentedValid ? [404, 'not_found'] : [400, 'validation_failed']);
        checked++;
      }
      expect(verdicts.refused, path).toBeGreaterThan(0);
      if (Object.keys(schema.properties).length > 0) expect(verdicts.accepted, path).toBeGreaterThan(1);
      // Without a body the route decodes `{}`: refused exactly where the body is documented as required.
      const none = await signerCall('POST', path);
      expect([none.status, op.requestBody.required], path).toEqual([satisfies(schema, {}) ? 404 : 400, !satisfies(schema, {})]);
    }
    expect(checked).toBeGreaterThan(100);
  });

  it('matches what a real link answers: the token has the documented shape, the view its schema', async () => {
    const { req, doc } = await s.draftReady();
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
    let token: string | undefined;
    for (const until = Date.now() + 20_000; token === undefined && Date.now() < until; await new Promise((r) => setTimeout(r, 100))) {
      const mail = (await s.call('GET', '/api/v1/test-mailbox?to=ada@example.com&limit=100')).body.data;
      token = mail.map((m: any) => /\/sign\/([A-Za-z0-9]+)/.exec(m.text)?.[1]).find(Boolean);
    }
    expect(token).toBeDefined();
    const ops = spec.paths;
    expect(satisfies(ops['/api/v1/signing/{token}'].get.parameters[0].schema, token)).toBe(true);

    const viewSchema = ops['/api/v1/signing/{token}'].get.responses['200'].content['application/json'].schema;
    const view = await s.call('GET', `/api/v1/signing/${token}`, { key: null });
    expect(view.status).toBe(200);
    expect(view.body.fields.length).toBeGreaterThan(0);
    expect(undocumentedKeys(viewSchema, view.body)).toEqual([]);
    expect(satisfies(viewSchema, view.body)).toBe(true);

    const pdf = await fetch(`${s.url}/api/v1/signing/${token}/documents/${doc.id}`);
    expect(Object.keys(ops['/api/v1/signing/{token}/documents/{documentId}'].get.responses['200'].content)).toEqual([pdf.headers.get('content-type')]);

    const signOp = ops['/api/v1/signing/{token}/sign'].post;
    const body = { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } };
    expect(satisfies(signOp.requestBody.content['application/json'].schema, body)).toBe(true);
    const signed = await s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body });
    expect(signed.status).toBe(200);
    expect(satisfies(signOp.responses['200'].content['application/json'].schema, signed.body)).toBe(true);
    expect(signed.body.recipient.status).toBe('SIGNED');
  }, 30_000);
});
