import type { Migration } from '@esig/store-sql';
import { loadMigrationsFrom, refuseTooNew } from '@esig/store-sql';
import type Database from 'better-sqlite3';

/**
 * The schema version this code is written for: the number of the last file in `migrations/`. Loading
 * checks that the folder agrees, so adding a migration without raising this fails at the first start.
 */
export const LATEST_SCHEMA_VERSION = 9;

export { SchemaTooNewError } from '@esig/store-sql';
export type { Migration } from '@esig/store-sql';

// Resolved from this module rather than the working directory, so the CLI works from any folder.
const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

/** Reads `migrations/NNNN_name.sql`, checking that they run 1, 2, … up to LATEST_SCHEMA_VERSION. */
export const loadMigrations = (dir: URL = MIGRATIONS_DIR): readonly Migration[] => loadMigrationsFrom(dir, LATEST_SCHEMA_VERSION);

const hasMigrationsTable = (db: Database.Database): boolean =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'").get() !== undefined;

/** The highest applied migration, 0 for a database never migrated. */
export const schemaVersion = (db: Database.Database): number => {
  if (!hasMigrationsTable(db)) return 0;
  const row = db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: unknown };
  if (typeof row.v !== 'number') throw new Error(`schema_migrations holds a non-numeric version: ${String(row.v)}`);
  return row.v;
};

/** Throws SchemaTooNewError when the database is ahead of this code. */
export const assertNotTooNew = (db: Database.Database): void => {
  const v = schemaVersion(db);
  refuseTooNew(v, LATEST_SCHEMA_VERSION);
};

/**
 * Applies the migrations the database lacks, each with its bookkeeping row in its own IMMEDIATE
 * transaction: a failed migration leaves the previous version intact, and a second process migrating at
 * the same moment waits, then sees the version already applied and skips it. Returns how many it applied.
 * Runs at startup (or from `esig migrate`), never while a UnitOfWork transaction is open.
 */
export const migrate = (db: Database.Database, migrations: readonly Migration[] = loadMigrations()): number => {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version    INTEGER NOT NULL PRIMARY KEY,
    name       TEXT NOT NULL,
    applied_at TEXT NOT NULL
  ) STRICT`);
  assertNotTooNew(db);
  let applied = 0;
  for (const m of migrations) {
    const apply = db.transaction(() => {
      if (schemaVersion(db) >= m.version) return false;
      db.exec(m.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(m.version, m.name, new Date().toISOString());
      return true;
    });
    if (apply.immediate()) applied++;
  }
  return applied;
};
