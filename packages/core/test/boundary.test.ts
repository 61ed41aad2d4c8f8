import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The hexagon's wall: the core may import only its own files, fp-ts and io-ts. Anything else (express, pg,
 * better-sqlite3, nodemailer, tsyringe, pdf-lib, node: modules, adapter packages) fails this test.
 */
const CORE = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(CORE, 'src');

/** Every module specifier a file names: static and type imports, re-exports, import(), require(). */
const importSpecifiers = (source: string): string[] => {
  const found = ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
  // import() or require() of a computed name cannot be checked, so it is refused outright.
  const computed = [...source.matchAll(/\b(?:import|require)\s*\(\s*(?!['"][^'"]*['"]\s*\))([^)]*)\)/g)].map((m) => `<computed: ${m[1]!.trim()}>`);
  return [...found, ...computed];
};

const PACKAGE = /^(fp-ts|io-ts)(\/[A-Za-z0-9_./-]+)?$/;

/** Why `spec`, imported by `file`, is not allowed in the core; null when it is fine. */
const violation = (file: string, spec: string): string | null => {
  if (spec.startsWith('./') || spec.startsWith('../')) {
    const target = resolve(dirname(file), spec);
    return target === SRC || target.startsWith(SRC + sep) ? null : `${spec} leaves packages/core/src`;
  }
  return PACKAGE.test(spec) ? null : `${spec} is not fp-ts, io-ts or a relative path`;
};

const sourceFiles = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.(c|m)?(t|j)sx?$/.test(e.name) ? [join(dir, e.name)] : [],
  );

describe('core boundary', () => {
  it('no file under packages/core/src imports anything but relative paths, fp-ts and io-ts', () => {
    const files = sourceFiles(SRC);
    expect(files.length).toBeGreaterThan(30);
    const problems = files.flatMap((file) =>
      importSpecifiers(readFileSync(file, 'utf8'))
        .map((spec) => violation(file, spec))
        .filter((v): v is string => v !== null)
        .map((v) => `${relative(CORE, file)}: ${v}`),
    );
    expect(problems).toEqual([]);
  });

  it('has no try/catch: exceptions become values at adapter edges (E.tryCatch where the core must call a thrower)', () => {
    const withTry = sourceFiles(SRC).filter((file) => {
      let found = false;
      const visit = (n: ts.Node): void => {
        if (ts.isTryStatement(n)) found = true;
        else ts.forEachChild(n, visit);
      };
      visit(ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true));
      return found;
    });
    expect(withTry.map((f) => relative(CORE, f))).toEqual([]);
  });

  it('packages/core/package.json needs fp-ts and io-ts only, as peers (their types are in the core’s public types)', () => {
    const pkg = JSON.parse(readFileSync(join(CORE, 'package.json'), 'utf8')) as Record<string, Record<string, string> | undefined>;
    expect(Object.keys(pkg.peerDependencies ?? {}).sort()).toEqual(['fp-ts', 'io-ts']);
    for (const field of ['dependencies', 'optionalDependencies', 'bundleDependencies', 'bundledDependencies'])
      expect(Object.keys(pkg[field] ?? {}), field).toEqual([]);
  });
});

describe('the boundary scanner itself', () => {
  const inSrc = join(SRC, 'use-cases', 'example.ts');
  const refused = (source: string) => importSpecifiers(source).filter((s) => violation(inSrc, s) !== null);

  it('finds and refuses every kind of forbidden import', () => {
    const samples: Array<[string, string]> = [
      ["import express from 'express';", 'express'],
      ["import type { Pool } from 'pg';", 'pg'],
      ['import Database from "better-sqlite3";', 'better-sqlite3'],
      ["export * from 'node:fs';", 'node:fs'],
      ["export { createTransport } from 'nodemailer';", 'nodemailer'],
      ["import 'reflect-metadata';", 'reflect-metadata'],
      ["const c = await import('tsyringe');", 'tsyringe'],
      ["const { PDFDocument } = require('pdf-lib');", 'pdf-lib'],
      ["import { createHash } from 'crypto';", 'crypto'],
      ["import { nodeCrypto } from '@esig/runtime-node';", '@esig/runtime-node'],
      ["import {\n  createSqliteStores,\n  type Db,\n} from '../../../../adapters/store-sqlite/src';", '../../../../adapters/store-sqlite/src'],
      ["import x from 'fp-ts-contrib/Do';", 'fp-ts-contrib/Do'],
      ["import * as t from 'io-ts-types';", 'io-ts-types'],
    ];
    for (const [source, spec] of samples) expect(refused(source), source).toEqual([spec]);
    expect(refused('const m = await import(name);')).toEqual(['<computed: name>']);
  });

  it('lets the allowed imports through, and ignores comments and strings', () => {
    const source = [
      "import * as E from 'fp-ts/lib/Either.js';",
      "import { pipe } from 'fp-ts/lib/function.js';",
      "import * as t from 'io-ts';",
      "import type { Tenant } from '../model/tenant.js';",
      "export * from './policy.js';",
      "// import express from 'express'",
      "const s = \"import pg from 'pg'\";",
    ].join('\n');
    expect(importSpecifiers(source)).toEqual(['fp-ts/lib/Either.js', 'fp-ts/lib/function.js', 'io-ts', '../model/tenant.js', './policy.js']);
    expect(refused(source)).toEqual([]);
  });
});
