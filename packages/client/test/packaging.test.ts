import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { VERSION } from '../src/index.js';

const root = new URL('..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = mkdtempSync(join(tmpdir(), 'esig-client-build-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(join(dir, e.name)) : [join(dir, e.name)]));

/** Every module specifier a compiled file imports or re-exports (TypeScript's own scanner: comments do not count). */
const specifiers = (text: string) => ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);

/** The identifiers of a file's code (comments skipped), to find Node-only globals. */
const identifiers = (text: string): string[] => {
  const scanner = ts.createScanner(ts.ScriptTarget.ES2022, true, ts.LanguageVariant.Standard, text);
  const out: string[] = [];
  for (let k = scanner.scan(); k !== ts.SyntaxKind.EndOfFileToken; k = scanner.scan()) if (k === ts.SyntaxKind.Identifier) out.push(scanner.getTokenText());
  return out;
};

describe('the published package', () => {
  it('is @esig/client 0.1.0, ESM, with types first in its exports, shipping its build and the sources its declaration maps point at', () => {
    expect(pkg).toMatchObject({ name: '@esig/client', version: '0.1.0', type: 'module', license: 'Apache-2.0', sideEffects: false, files: ['dist', 'src', '!dist/.tsbuildinfo'] });
    expect(Object.keys(pkg.exports['.'])).toEqual(['@esig/source', 'types', 'import']);
    expect(pkg.dependencies ?? {}).toEqual({});
    expect(VERSION).toBe(pkg.version);
  });

  it('compiles with its build config (no Node types at all) to JavaScript and declarations that import nothing outside the package', () => {
    const configPath = join(root, 'tsconfig.build.json');
    const parsed = ts.getParsedCommandLineOfConfigFile(configPath, { outDir: out }, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(String(d.messageText)); } })!;
    const program = ts.createProgram(parsed.fileNames, parsed.options);
    const emitted = program.emit();
    const diagnostics = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    expect(diagnostics).toEqual([]);

    const files = filesUnder(out);
    expect(files.map((f) => f.slice(out.length + 1)).sort()).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'index.d.ts.map', 'generated/api-types.d.ts']));
    for (const f of files.filter((x) => x.endsWith('.js') || x.endsWith('.d.ts'))) {
      const text = readFileSync(f, 'utf8');
      // Self-contained: relative imports with their .js extension, nothing from node:, io-ts, fp-ts or another esig package.
      for (const s of specifiers(text)) expect(s, `${f} imports ${s}`).toMatch(/^\.\.?\/.*\.js$/);
      if (f.endsWith('.js')) expect(identifiers(text).filter((x) => ['process', 'Buffer', 'require', '__dirname'].includes(x)), f).toEqual([]);
    }
  });
});
