import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { SchemaTooNewError, loadMigrationsFrom, refuseTooNew } from '../src/index.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A temp folder holding `files` (name → SQL), as the directory URL the loader takes. */
const folder = (files: Record<string, string>): URL => {
  const d = mkdtempSync(join(tmpdir(), 'esig-migrations-'));
  dirs.push(d);
  for (const [name, sql] of Object.entries(files)) writeFileSync(join(d, name), sql);
  return pathToFileURL(`${d}/`);
};

describe('loadMigrationsFrom', () => {
  it('reads NNNN_name.sql in version order and ignores other files', () => {
    const dir = folder({ '0002_more.sql': 'B;', '0001_init.sql': 'A;', 'README.md': 'x', '0003_Bad-Name.sql': 'C;' });
    expect(loadMigrationsFrom(dir, 2)).toEqual([
      { version: 1, name: 'init', sql: 'A;' },
      { version: 2, name: 'more', sql: 'B;' },
    ]);
  });

  it('refuses a gap in the numbering', () => {
    const dir = folder({ '0001_init.sql': 'A;', '0003_skip.sql': 'C;' });
    expect(() => loadMigrationsFrom(dir, 2)).toThrow(/without gaps; found 3 at position 2/);
  });

  it('refuses a folder that does not start at 1', () => {
    expect(() => loadMigrationsFrom(folder({ '0002_late.sql': 'B;' }), 1)).toThrow(/found 2 at position 1/);
  });

  it('refuses a count that disagrees with the code', () => {
    const dir = folder({ '0001_init.sql': 'A;', '0002_more.sql': 'B;' });
    expect(() => loadMigrationsFrom(dir, 3)).toThrow(/holds 2 migrations but LATEST_SCHEMA_VERSION is 3/);
    expect(() => loadMigrationsFrom(dir, 1)).toThrow(/holds 2 migrations but LATEST_SCHEMA_VERSION is 1/);
  });
});

describe('refuseTooNew', () => {
  it('accepts a database at or behind the code', () => {
    expect(() => refuseTooNew(0, 3)).not.toThrow();
    expect(() => refuseTooNew(3, 3)).not.toThrow();
  });

  it('throws SchemaTooNewError carrying both versions when the database is ahead', () => {
    let thrown: unknown;
    try {
      refuseTooNew(4, 3);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SchemaTooNewError);
    expect(thrown).toMatchObject({ name: 'SchemaTooNewError', databaseVersion: 4, codeVersion: 3 });
    expect((thrown as Error).message).toBe("The database schema is at version 4, newer than this code's 3; refusing to use it.");
  });
});
