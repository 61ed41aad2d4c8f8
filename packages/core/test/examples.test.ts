// Every `@example` in the TSDoc of @esig/core's public entry points is compiled against the real types, so
// an example cannot drift from the API it shows (Effect's docs generator does the same with its examples).
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const CORE = join(dirname(fileURLToPath(import.meta.url)), '..');
const INDEX = join(CORE, 'src', 'index.ts');
const EXAMPLES = join(CORE, 'test', '__tsdoc_examples__.ts');

/** The main use cases a newcomer starts from: each must show itself in an example. */
const MAIN = [
  'execute',
  'executeIdempotently',
  'inspectUpload',
  'uploadDocument',
  'createSignatureRequest',
  'addRecipient',
  'addField',
  'sendSignatureRequest',
  'cancelSignatureRequest',
  'getSignatureRequest',
  'listSignatureRequests',
  'getFinishedDocument',
  'listEvents',
  'issueSigningLink',
  'openSigningLink',
  'signAsRecipient',
  'authenticate',
  'createWebhookEndpoint',
  'jobHandlers',
  'runDueJobs',
  'overridePorts',
  'describeError',
];

const options: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: ['node'],
  customConditions: ['@esig/source'],
};

/** The public exports of the root entry, with the `@example` blocks of their TSDoc. */
const publicExamples = () => {
  const program = ts.createProgram([INDEX], options);
  const checker = program.getTypeChecker();
  const module = checker.getSymbolAtLocation(program.getSourceFile(INDEX)!)!;
  return checker.getExportsOfModule(module).map((s) => {
    const symbol = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
    const examples = (symbol.declarations ?? []).flatMap((d) =>
      ts
        .getJSDocTags(d)
        .filter((t) => t.tagName.text === 'example')
        .map((t) => ts.getTextOfJSDocComment(t.comment) ?? ''),
    );
    return { name: s.name, isValue: (symbol.flags & ts.SymbolFlags.Value) !== 0, examples };
  });
};

/** What the examples may name without declaring it: a caller's usual context. */
const prelude = (valueNames: readonly string[]) => `
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type * as esigTypes from '@esig/core';
import type { Principal } from '@esig/core';
import { ${valueNames.join(', ')} } from '@esig/core';
void E; void pipe; void TE;
declare const deps: {
  readonly stores: esigTypes.Stores; readonly uow: esigTypes.UnitOfWork; readonly clock: esigTypes.Clock; readonly ids: esigTypes.IdGenerator;
  readonly crypto: esigTypes.Crypto; readonly pdf: esigTypes.PdfInspector; readonly stamps: esigTypes.StampPreflight; readonly pageLimits: esigTypes.PageLimits;
  readonly cursors: esigTypes.CursorSigner; readonly secrets: esigTypes.SecretBox; readonly sender: esigTypes.WebhookSender; readonly retryScale: number;
  readonly random: () => number; readonly reminderIntervalMs: number | null; readonly mail: (t: esigTypes.Tenant) => esigTypes.MailTransport;
  readonly publicUrl: string; readonly renderer: esigTypes.DocumentRenderer;
};
declare const me: esigTypes.Principal;
declare const tenant: esigTypes.Tenant;
declare const bytes: Uint8Array;
declare const token: string;
declare const requestId: string;
declare const documentId: string;
declare const recipientId: string;
declare const client: esigTypes.ClientInfo;
declare const request: esigTypes.SignatureRequest;
declare const ada: esigTypes.Recipient;
declare const publicUrl: string;
declare const yourSigningPage: string;
declare const pdf: { readonly renderer: esigTypes.DocumentRenderer };
declare const myS3Contents: esigTypes.DocumentContentStore;
declare const path: string;
declare function openSqliteStore(o: { path: string }): { stores: esigTypes.Stores; uow: esigTypes.UnitOfWork };
declare function writeFile(path: string, bytes: Uint8Array): void;
`;

describe('TSDoc examples of @esig/core', () => {
  const exports = publicExamples();

  it('every main use case has at least one @example', () => {
    const without = MAIN.filter((name) => !exports.some((e) => e.name === name && e.examples.length > 0));
    expect(without).toEqual([]);
  });

  it('every @example compiles against the public API', () => {
    const examples = exports.flatMap((e) => e.examples.map((code) => ({ name: e.name, code })));
    expect(examples.length).toBeGreaterThanOrEqual(MAIN.length);
    const source =
      prelude(exports.filter((e) => e.isValue).map((e) => e.name)) +
      examples.map((e, i) => `\n// ${e.name}\nexport async function example${i}() {\n${e.code}\n}\n`).join('');
    const host = ts.createCompilerHost(options);
    const read = host.readFile.bind(host);
    host.readFile = (file) => (file === EXAMPLES ? source : read(file));
    const exists = host.fileExists.bind(host);
    host.fileExists = (file) => file === EXAMPLES || exists(file);
    const program = ts.createProgram([EXAMPLES], options, host);
    const problems = ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file?.fileName === EXAMPLES)
      .map((d) => {
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        const owner = source.split('\n').slice(0, line + 1).reverse().find((l) => l.startsWith('// ')) ?? '';
        return `${owner.slice(3)}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
      });
    expect(problems).toEqual([]);
  });
});
