import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * The database was migrated by newer code than this. Running on it could misread or corrupt rows the
 * newer code wrote, so the process must refuse to start (roll the code forward, or restore a backup).
 */
export class SchemaTooNewError extends Error {
  override readonly name = 'SchemaTooNewError';
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(`The database schema is at version ${databaseVersion}, newer than this code's ${codeVersion}; refusing to use it.`);
  }
}

/** Throws SchemaTooNewError when the database's version is ahead of the code's. */
export const refuseTooNew = (databaseVersion: number, codeVersion: number): void => {
  if (databaseVersion > codeVersion) throw new SchemaTooNewError(databaseVersion, codeVersion);
};

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const FILE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

/**
 * Reads `NNNN_name.sql` from `dir`, checking that they run 1, 2, … up to `latest` (the adapter's
 * LATEST_SCHEMA_VERSION), so adding a migration without raising that constant fails at the first start.
 * `dir` must end in `/` (file names resolve against it). Other files are ignored. Throws: a folder that disagrees with the code is a bug, not a runtime condition.
 */
export const loadMigrationsFrom = (dir: URL, latest: number): readonly Migration[] => {
  const path = fileURLToPath(dir);
  const migrations = readdirSync(path)
    .flatMap((file) => {
      const m = FILE.exec(file);
      return m === null ? [] : [{ version: Number(m[1]), name: m[2]!, sql: readFileSync(new URL(file, dir), 'utf8') }];
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`Migrations in ${path} must be numbered 1, 2, … without gaps; found ${m.version} at position ${i + 1}.`);
  });
  if (migrations.length !== latest) throw new Error(`${path} holds ${migrations.length} migrations but LATEST_SCHEMA_VERSION is ${latest}.`);
  return migrations;
};
