import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import type { Document, DocumentId, EsigError, ErrorCode, Page, PagedList, SignatureRequest, SignatureRequestCreateParams, SignatureRequestStatus, WebhookEvent } from '../src/index.js';
import { Esig } from '../src/index.js';

// Static checks: `npm run typecheck` compiles this file, so each assertion below is a compile error if it breaks.
describe('the types (checked by the compiler)', () => {
  it('types resources from the server’s codecs: literal unions, prefixed ids', () => {
    expectTypeOf<SignatureRequestStatus>().toEqualTypeOf<'DRAFT' | 'SENT' | 'COMPLETED' | 'DECLINED' | 'EXPIRED' | 'CANCELLED'>();
    expectTypeOf<Document['status']>().toEqualTypeOf<'UPLOADED' | 'PENDING' | 'COMPLETED' | 'DECLINED' | 'EXPIRED' | 'CANCELLED'>();
    expectTypeOf<DocumentId>().toEqualTypeOf<`doc_${string}`>();
    expectTypeOf<SignatureRequest['documentIds']>().toEqualTypeOf<Array<`doc_${string}`>>();
    expectTypeOf<SignatureRequestCreateParams>().toHaveProperty('title').toEqualTypeOf<string>();
    expectTypeOf<EsigError['code']>().extract<ErrorCode>().toEqualTypeOf<ErrorCode>();
  });

  it('types methods: promises of resources, paged lists, bytes for PDFs', () => {
    const esig = new Esig({ apiKey: 'esig_test_x', baseUrl: 'http://localhost:3000' });
    expectTypeOf(esig.documents.get).returns.resolves.toEqualTypeOf<Document>();
    expectTypeOf(esig.documents.list).returns.toEqualTypeOf<PagedList<Document>>();
    expectTypeOf(esig.signatureRequests.list({ status: 'SENT' }).page).returns.resolves.toEqualTypeOf<Page<SignatureRequest>>();
    expectTypeOf(esig.signatureRequests.finishedDocument).returns.resolves.toEqualTypeOf<Uint8Array>();
    expectTypeOf(Esig.webhooks.constructEvent).returns.resolves.toEqualTypeOf<WebhookEvent>();
    expectTypeOf(esig.signatureRequests.send).parameter(1).toMatchTypeOf<{ idempotencyKey?: string } | undefined>();
  });
});

// The same, as a test run by `npm test`: programs compiled against the client's sources, where a typo must fail.
const scratch = join(new URL('..', import.meta.url).pathname, '.vitest-tmp');
mkdirSync(scratch, { recursive: true });
const dir = mkdtempSync(join(scratch, 'types-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const CASES = {
  correct: `
  const doc = await esig.documents.upload(new Uint8Array(), { name: 'a.pdf' });
  const req = await esig.signatureRequests.create({ title: 'NDA', documentIds: [doc.id], signingOrder: 'sequential' }, { idempotencyKey: 'k1' });
  await esig.signatureRequests.addRecipient(req.id, { email: 'a@example.com', firstName: 'A', lastName: 'B', authentication: 'email_otp' });
  for await (const r of esig.signatureRequests.list({ status: 'SENT', limit: 50 })) { const s: 'SENT' | 'DRAFT' | 'COMPLETED' | 'DECLINED' | 'EXPIRED' | 'CANCELLED' = r.status; void s; }
  const page = await esig.events.list({ type: 'request.completed' }).page();
  const cursor: string | null = page.pageInfo.nextCursor; void cursor;`,
  'a misspelt property of a create body': `await esig.signatureRequests.create({ titel: 'NDA', documentIds: [] });`,
  'a misspelt property of a response': `const d = await esig.documents.get('doc_1'); void d.pagecount;`,
  'a status that does not exist': `esig.signatureRequests.list({ status: 'SIGNED' });`,
  'an id of the wrong kind': `await esig.documents.get('req_01');`,
  'a field type that does not exist': `await esig.signatureRequests.addField('req_1', { documentId: 'doc_1', recipientId: 'rcp_1', type: 'stamp', page: 1, x: 0, y: 0, width: 1, height: 1 });`,
  'a scope that does not exist': `await esig.apiKeys.create({ name: 'x', scopes: ['documents:delete'] });`,
  'a misspelt request option': `await esig.signatureRequests.send('req_1', { idempotencykey: 'k' });`,
} as const;

/** Each case as its own module, all compiled in one program; the diagnostics of each, by case. */
const compiled = (() => {
  const files = Object.keys(CASES).map((name, i) => [name, join(dir, `case-${i}.ts`)] as const);
  for (const [name, file] of files)
    writeFileSync(file, `import { Esig } from '../../src/index.js';\nconst esig = new Esig({ apiKey: 'esig_test_x', baseUrl: 'http://localhost:3000' });\nexport const run = async () => {\n${CASES[name as keyof typeof CASES]}\n};\n`);
  const program = ts.createProgram(
    files.map(([, f]) => f),
    {
      strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext,
      lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'], types: [], skipLibCheck: true,
    },
  );
  return new Map(
    files.map(([name, file]) => [
      name,
      ts.getPreEmitDiagnostics(program, program.getSourceFile(file)).map((d) => `TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`),
    ]),
  );
})();

describe('programs using the client (compiled by the TypeScript compiler)', () => {
  it('accept correct calls', () => {
    expect(compiled.get('correct')).toEqual([]);
  });

  it.each([
    ['a misspelt property of a create body', /TS2561|TS2353/],
    ['a misspelt property of a response', /TS2551|TS2339/],
    ['a status that does not exist', /TS2322/],
    ['an id of the wrong kind', /TS2345/],
    ['a field type that does not exist', /TS2322/],
    ['a scope that does not exist', /TS2322/],
    ['a misspelt request option', /TS2561|TS2353/],
  ] as const)('refuse %s', (name, code) => {
    const errors = compiled.get(name)!;
    expect(errors.length, errors.join('\n')).toBeGreaterThan(0);
    expect(errors.join('\n')).toMatch(code);
  });
});
