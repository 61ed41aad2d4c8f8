import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { LATEST_SCHEMA_VERSION } from '@esig/store-sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { BIN } from './spawn.js';

/**
 * A process that is not to migrate (`ESIG_AUTO_MIGRATE=false`) on a database behind its code refuses to start,
 * rather than start and fail the first request that needs the newer schema with a 500.
 */
const dir = mkdtempSync(join(tmpdir(), 'esig-schema-'));
const path = join(dir, 'esig.db');
const env = { ...process.env, ESIG_DATABASE_URL: `sqlite:${path}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error', ESIG_AUTO_MIGRATE: 'false' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const esig = (...args: string[]) => spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', timeout: 60_000 });
/** The SQLite store's migrations as files: the database is built the way the previous version left it. */
const MIGRATIONS = new URL('../../../adapters/store-sqlite/migrations/', import.meta.url);
const migrateUpTo = (version: number) => {
  const db = new Database(path);
  try {
    db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT');
    for (const file of readdirSync(MIGRATIONS).filter((f) => /^\d{4}_/.test(f)).sort()) {
      const v = Number(file.slice(0, 4));
      if (v > version) break;
      db.exec(readFileSync(new URL(file, MIGRATIONS), 'utf8'));
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(v, file, new Date().toISOString());
    }
  } finally {
    db.close();
  }
};

describe('a schema older than the code, with ESIG_AUTO_MIGRATE=false', () => {
  it('serve, worker and the operator commands refuse to start and say what to do; esig migrate still runs', () => {
    // The database as the previous version left it.
    migrateUpTo(LATEST_SCHEMA_VERSION - 1);
    for (const args of [['serve'], ['worker'], ['keys', 'create', '--org', 'o', '--mode', 'test', '--scopes', '*']]) {
      const r = esig(...args);
      expect(r.status, `${args.join(' ')}:\n${r.stdout}${r.stderr}`).toBe(1);
      expect(r.stderr).toContain(`the database schema is at version ${LATEST_SCHEMA_VERSION - 1}, older than this code's ${LATEST_SCHEMA_VERSION}`);
      expect(r.stderr).toContain('run `esig migrate` first');
      // A message for an operator, not a stack trace.
      expect(r.stderr).not.toMatch(/\n\s+at /);
    }
    // `esig migrate` opens the older database: it is what brings it up to date. Then the rest start.
    const migrated = esig('migrate');
    expect(migrated.status, migrated.stderr).toBe(0);
    const created = esig('keys', 'create', '--org', 'o', '--mode', 'test', '--scopes', '*');
    expect(created.status, created.stderr).toBe(0);
    expect(created.stdout).toContain('esig_test_');
  });
});
