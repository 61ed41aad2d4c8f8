// The OpenAPI document under tools nobody here wrote: Redocly's linter (the engine of `redocly lint`) with its
// strict recommended rules and more, ajv for every example, and openapi-typescript + openapi-fetch for a
// generated client that makes real calls.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createConfig, formatProblems, lintFromString } from '@redocly/openapi-core';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { createResponseValidator } from './openapi-validator.js';

let s: TestServer;
let spec: any;
beforeAll(async () => {
  // The document names the server's public URL; linted as a deployment serves it (a development server's
  // `http://localhost` is what Redocly's no-server-example.com rule exists to catch in a published document).
  s = await startTestServer({ ESIG_PUBLIC_URL: 'https://esig.acme.dev' });
  spec = (await s.call('GET', '/api/v1/openapi.json', { key: null })).body;
});
afterAll(async () => s?.close());

/** Redocly's `recommended-strict` (every warning an error), and further rules this API keeps. */
const LINT_RULES = {
  extends: ['recommended-strict'],
  rules: {
    'info-license-strict': 'error',
    'operation-tag-defined': 'error',
    'tag-description': 'error',
    'operation-singular-tag': 'error',
    'parameter-description': 'error',
    'paths-kebab-case': 'error',
    'no-invalid-media-type-examples': { severity: 'error', allowAdditionalProperties: false },
    'no-invalid-parameter-examples': 'error',
    'no-invalid-schema-examples': 'error',
    'no-unused-components': 'error',
    'no-required-schema-properties-undefined': 'error',
    'no-enum-type-mismatch': 'error',
    'spec-strict-refs': 'error',
    // Every 4xx is RFC 9457 problem+json, and every answer names its request and the rate-limit state.
    'operation-4xx-problem-details-rfc7807': 'error',
    'response-contains-header': {
      severity: 'error',
      names: {
        '2XX': ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
        '4XX': ['X-Request-Id', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
        '5XX': ['X-Request-Id'],
        '429': ['Retry-After'],
      },
    },
    'request-mime-type': { severity: 'error', allowedValues: ['application/json', 'application/pdf', 'multipart/form-data'] },
    'response-mime-type': { severity: 'error', allowedValues: ['application/json', 'application/problem+json', 'application/pdf'] },
    'rule/json-has-example': {
      subject: { type: 'MediaType', filterInParentKeys: ['application/json', 'application/problem+json'] },
      assertions: { requireAny: ['example', 'examples'] },
      message: 'Every JSON request and response shows an example.',
      severity: 'error',
    },
  },
};

const lint = async (doc: unknown) => {
  const config = await createConfig(LINT_RULES as Parameters<typeof createConfig>[0]);
  return lintFromString({ source: JSON.stringify(doc, null, 2), absoluteRef: 'openapi.json', config });
};

describe('the OpenAPI document under a real linter', () => {
  it('passes Redocly’s strict rules with zero problems', async () => {
    const problems = await lint(spec);
    const errors = problems.filter((p) => p.severity === 'error').length;
    if (problems.length > 0) formatProblems(problems, { format: 'stylish', maxProblems: 200, totals: { errors, warnings: problems.length - errors, ignored: 0 }, version: 'test' });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    console.info(`Redocly lint (recommended-strict + ${Object.keys(LINT_RULES.rules).length} rules): ${errors} errors, ${problems.length - errors} warnings`);
  });

  it('is refused by the same rules when an operation loses its example, a header or its tag (the lint can fail)', async () => {
    const broken = structuredClone(spec);
    const op = broken.paths['/api/v1/documents/{documentId}'].get;
    delete op.responses['200'].content['application/json'].example;
    op.tags = ['Undeclared'];
    delete broken.paths['/api/v1/api-keys'].post.responses['201'].headers;
    broken.paths['/api/v1/signature-requests'].post.requestBody.content['application/json'].example = { title: 'x', documentIds: [], tilte: 'typo' };
    const rules = new Set((await lint(broken)).map((p) => p.ruleId));
    expect([...rules].sort()).toEqual(
      expect.arrayContaining(['rule/json-has-example', 'operation-tag-defined', 'response-contains-header', 'no-invalid-media-type-examples']),
    );
  });

  it('gives every operation an operationId, a summary, one declared tag, problem+json errors and examples', () => {
    const tags = new Set(spec.tags.map((t: { name: string }) => t.name));
    let operations = 0;
    for (const [path, methods] of Object.entries<any>(spec.paths))
      for (const [method, op] of Object.entries<any>(methods)) {
        const at = `${method.toUpperCase()} ${path}`;
        operations++;
        expect(op.operationId, at).toMatch(/^[a-z][A-Za-z]+$/);
        expect(op.summary, at).toMatch(/\w/);
        expect(op.tags.length, at).toBe(1);
        expect(tags.has(op.tags[0]), at).toBe(true);
        const problems = Object.entries<any>(op.responses).filter(([status]) => Number(status) >= 400);
        expect(problems.length, at).toBeGreaterThan(2);
        for (const [status, r] of problems) {
          const media = r.content['application/problem+json'];
          expect(media.schema, `${at} ${status}`).toEqual({ $ref: '#/components/schemas/Problem' });
          // Each code the description names has its example, with that status.
          const codes = [...r.description.matchAll(/`([a-z_]+)`:/g)].map((m) => m[1]);
          expect(Object.keys(media.examples).sort(), `${at} ${status}`).toEqual([...codes].sort());
          for (const ex of Object.values<any>(media.examples)) expect(ex.value.status, `${at} ${status}`).toBe(Number(status));
        }
        const json = [op.requestBody, ...Object.values<any>(op.responses)].flatMap((x) => (x?.content?.['application/json'] ? [x.content['application/json']] : []));
        for (const m of json) expect(m.example, at).toBeDefined();
      }
    expect(operations).toBeGreaterThan(35);
  });

  it('has examples that ajv finds valid against their own schemas', () => {
    const v = createResponseValidator(spec);
    let checked = 0;
    for (const [path, methods] of Object.entries<any>(spec.paths))
      for (const [method, op] of Object.entries<any>(methods))
        for (const [where, content] of [['request', op.requestBody?.content], ...Object.entries<any>(op.responses).map(([st, r]) => [st, r.content])] as const)
          for (const [type, media] of Object.entries<any>(content ?? {})) {
            const values = media.example !== undefined ? [media.example] : Object.values<any>(media.examples ?? {}).map((e) => e.value);
            for (const value of values) {
              const errors = v.validateSchema(media.schema, value);
              expect(errors, `${method} ${path} ${where} ${type}`).toEqual([]);
              checked++;
            }
          }
    expect(checked).toBeGreaterThan(200);
  });
});

describe('the response check every end-to-end call goes through', () => {
  const headers = (extra: Record<string, string> = {}) =>
    new Headers({ 'content-type': 'application/json; charset=utf-8', 'x-request-id': 'log_x', 'x-ratelimit-limit': '1', 'x-ratelimit-remaining': '1', 'x-ratelimit-reset': '1', ...extra });

  it('accepts what the server really answers, and refuses what the document does not describe', async () => {
    const v = createResponseValidator(spec);
    const doc = await s.uploadPdf('checked.pdf');
    const real = await fetch(`${s.url}/api/v1/documents/${doc.id}`, { headers: { authorization: `Bearer ${s.key}` } });
    const body = (await real.json()) as Record<string, unknown>;
    expect(() => v.check('GET', `/api/v1/documents/${doc.id}`, { status: real.status, headers: real.headers, body })).not.toThrow();
    expect(v.stats.validated).toBe(1);

    const cases: Array<[string, string, string, { status: number; headers: Headers; body: unknown }, RegExp]> = [
      ['a misspelt key', 'GET', `/api/v1/documents/${doc.id}`, { status: 200, headers: headers(), body: { ...body, pagecount: 1 } }, /keys the document does not describe: .pagecount/],
      ['a wrong enum value', 'GET', `/api/v1/documents/${doc.id}`, { status: 200, headers: headers(), body: { ...body, status: 'SIGNED' } }, /allowed values/],
      ['an undocumented status', 'GET', `/api/v1/documents/${doc.id}`, { status: 418, headers: headers(), body: {} }, /does not document status 418/],
      ['an undocumented content type', 'GET', `/api/v1/documents/${doc.id}`, { status: 200, headers: headers({ 'content-type': 'text/html' }), body: '<p>' }, /content type text\/html/],
      ['a missing required header', 'GET', `/api/v1/documents/${doc.id}`, { status: 200, headers: (() => { const h = headers(); h.delete('x-request-id'); return h; })(), body }, /X-Request-Id is missing/],
      ['an undocumented route answered 200', 'GET', '/api/v1/nothing-here', { status: 200, headers: headers(), body: {} }, /not in the OpenAPI document/],
      ['a problem without its code', 'GET', `/api/v1/documents/${doc.id}`, { status: 404, headers: headers({ 'content-type': 'application/problem+json' }), body: { type: 't', title: 'x', status: 404, detail: 'd', requestId: 'log_01JDQ4ZV8W3K5M7N9P2R4T6X01' } }, /code/],
    ];
    for (const [what, method, path, res, message] of cases) expect(() => v.check(method, path, res), what).toThrow(message);
    expect(v.stats.validated).toBe(1);
  });
});

describe('a client generated by openapi-typescript, called through openapi-fetch', () => {
  const dir = join(import.meta.dirname, '..', '.vitest-tmp');
  let work: string;
  beforeAll(() => {
    mkdirSync(dir, { recursive: true });
    work = mkdtempSync(join(dir, 'openapi-ts-'));
  });
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('generates types that compile, catch a misspelt parameter, and make real calls', async () => {
    writeFileSync(join(work, 'esig-api.d.ts'), astToString(await openapiTS(spec)));
    // The program a user of the generator would write; `@ts-expect-error` fails the compile if the typo is accepted.
    writeFileSync(
      join(work, 'use.ts'),
      `import createClient from 'openapi-fetch';
import type { paths } from './esig-api';

export const run = async (baseUrl: string, key: string, pdf: Uint8Array) => {
  const esig = createClient<paths>({ baseUrl, headers: { Authorization: \`Bearer \${key}\` } });
  const up = await esig.POST('/api/v1/documents', {
    params: { query: { name: 'generated.pdf' } },
    body: pdf as unknown as string,
    bodySerializer: (b) => b as unknown as BodyInit,
    headers: { 'Content-Type': 'application/pdf' },
  });
  if (!up.data) throw new Error(JSON.stringify(up.error));
  const created = await esig.POST('/api/v1/signature-requests', {
    body: { title: 'Made by openapi-fetch', documentIds: [up.data.id] },
    params: { header: { 'Idempotency-Key': 'openapi-fetch-1' } },
  });
  if (!created.data) throw new Error(JSON.stringify(created.error));
  const status: 'DRAFT' | 'SENT' | 'COMPLETED' | 'DECLINED' | 'EXPIRED' | 'CANCELLED' = created.data.status;
  const got = await esig.GET('/api/v1/signature-requests/{requestId}', { params: { path: { requestId: created.data.id } } });
  const missing = await esig.GET('/api/v1/documents/{documentId}', { params: { path: { documentId: 'doc_00000000000000000000000000' } } });
  // Compiled, never called: @ts-expect-error fails the compile if the misspelt parameter were accepted.
  const typo = () =>
    // @ts-expect-error documentID is not a parameter of this path
    esig.GET('/api/v1/documents/{documentId}', { params: { path: { documentID: 'doc_x' } } });
  void typo;
  return { document: up.data, status, request: got.data, missing: { status: missing.response.status, code: missing.error?.code } };
};
`,
    );
    const program = ts.createProgram([join(work, 'use.ts')], {
      strict: true,
      noEmit: true,
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.ESNext,
      moduleResolution: ts.ModuleResolutionKind.Bundler,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
      types: [],
      skipLibCheck: true,
    });
    const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    const { run } = (await import(join(work, 'use.ts'))) as { run: (url: string, key: string, pdf: Uint8Array) => Promise<any> };
    const out = await run(s.url, s.key, await makePdf(1));
    expect(out.document).toMatchObject({ name: 'generated.pdf', pageCount: 1, status: 'UPLOADED' });
    expect(out.status).toBe('DRAFT');
    expect(out.request).toMatchObject({ title: 'Made by openapi-fetch', documentIds: [out.document.id] });
    expect(out.missing).toEqual({ status: 404, code: 'not_found' });
  }, 60_000);
});
