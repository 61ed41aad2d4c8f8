// The TypeScript in docs/embed-the-core.md and docs/write-an-adapter.md, compiled against the packages'
// real types with a user's settings (strict, NodeNext), so the guides cannot drift from the API they show.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { expect, it } from 'vitest';

const HERE = dirname(fileURLToPath(import.meta.url));
const REPO = join(HERE, '..', '..', '..');

/** The ```ts blocks of a guide, in order, with a list item's indentation taken off. */
const blocks = (guide: string): string[] =>
  [...readFileSync(join(REPO, 'docs', guide), 'utf8').matchAll(/^( *)```ts\n([\s\S]*?)^ *```/gm)].map(([, indent, code]) =>
    code!
      .split('\n')
      .map((line) => (line.startsWith(indent!) ? line.slice(indent!.length) : line))
      .join('\n'),
  );

/**
 * Joins blocks into one module. A guide repeats an import in a later block so that each block reads on its
 * own; in one module the repeat would be a duplicate, so a name already imported is dropped.
 */
const join_ = (code: readonly string[]): string => {
  const seen = new Set<string>();
  return code
    .map((block) =>
      block
        .split('\n')
        .flatMap((line) => {
          const named = /^import (type )?\{([^}]*)\} from ('[^']+');$/.exec(line);
          if (named) {
            const names = named[2]!.split(',').map((n) => n.trim()).filter((n) => n !== '' && !seen.has(n));
            names.forEach((n) => seen.add(n));
            return names.length === 0 ? [] : [`import ${named[1] ?? ''}{ ${names.join(', ')} } from ${named[3]};`];
          }
          const whole = /^import (type )?\* as (\w+) from/.exec(line);
          if (whole) {
            if (seen.has(whole[2]!)) return [];
            seen.add(whole[2]!);
          }
          return [line];
        })
        .join('\n'),
    )
    .join('\n');
};

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

/** Type-checks `code` as a module of this package (so its dependencies resolve); returns the diagnostics. */
const check = (code: string): string[] => {
  const file = join(HERE, '__guide__.ts');
  const host = ts.createCompilerHost(options);
  const read = host.readFile.bind(host);
  const exists = host.fileExists.bind(host);
  host.readFile = (f) => (f === file ? code : read(f));
  host.fileExists = (f) => f === file || exists(f);
  const getSource = host.getSourceFile.bind(host);
  host.getSourceFile = (f, v, onError) => (f === file ? ts.createSourceFile(f, code, v) : getSource(f, v, onError));
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const where = d.file && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start) : null;
    const line = where ? code.split('\n')[where.line] : '';
    return `${where ? `line ${where.line + 1}: ` : ''}${ts.flattenDiagnosticMessageText(d.messageText, '\n')}\n    ${line}`;
  });
};

it('docs/embed-the-core.md: its code, block after block, compiles as one program', () => {
  const code = blocks('embed-the-core.md');
  expect(code.length).toBeGreaterThanOrEqual(8);
  // What the guide leaves to the reader: the PDF to send.
  const program = ['declare const pdfBytes: Uint8Array;', join_(code), 'export {};'].join('\n');
  expect(check(program)).toEqual([]);
}, 120_000);

it('docs/write-an-adapter.md: the adapter and its wiring compile', () => {
  // The test-file block imports the adapter from its package's sources; here the adapter is in the same program.
  const code = blocks('write-an-adapter.md').map((b) => b.replace(/^import \{ bucketContents \} from .*$/m, ''));
  expect(code.length).toBeGreaterThanOrEqual(3);
  const program = [
    // What the guide leaves to the reader: an object store's client.
    'interface YourBucketClient { put(name: string, bytes: Uint8Array): Promise<void>; get(name: string): Promise<Uint8Array | undefined> }',
    'declare const bucket: YourBucketClient;',
    'declare const testBucket: () => YourBucketClient;',
    join_(code),
  ].join('\n');
  expect(check(program)).toEqual([]);
}, 120_000);
