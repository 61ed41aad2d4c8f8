import type { Migration } from '@esig/store-sql';
import { loadMigrationsFrom, refuseTooNew } from '@esig/store-sql';
import type pg from 'pg';

/**
 * The schema version this code is written for: the number of the last file in `migrations/`. Loading
 * checks that the folder agrees, so adding a migration without raising this fails at the first start.
 */
export const LATEST_SCHEMA_VERSION = 18;

export { SchemaTooNewError } from '@esig/store-sql';
export type { Migration } from '@esig/store-sql';

// Resolved from this module rather than the working directory, so the CLI works from any folder.
const MIGRATIONS_DIR = new URL('../migrations/', import.meta.url);

/**
 * The key of the session-level advisory lock that migrations run under, so that processes starting at
 * the same moment migrate one after another (the later ones then find nothing left to do). Arbitrary,
 * but fixed forever: it is how processes of different versions recognise each other.
 */
export const MIGRATION_LOCK_KEY = 0x65_73_69_67_0001; // 'esig', 1

/** Reads `migrations/NNNN_name.sql`, checking that they run 1, 2, … up to LATEST_SCHEMA_VERSION. */
export const loadMigrations = (dir: URL = MIGRATIONS_DIR): readonly Migration[] => loadMigrationsFrom(dir, LATEST_SCHEMA_VERSION);

type Queryable = Pick<pg.ClientBase, 'query'>;

/** The highest applied migration, 0 for a database never migrated. */
export const schemaVersion = async (db: Queryable): Promise<number> => {
  const exists = await db.query<{ t: string | null }>("SELECT to_regclass('schema_migrations')::text AS t");
  if (exists.rows[0]?.t == null) return 0;
  const r = await db.query<{ v: unknown }>('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations');
  const v = r.rows[0]?.v;
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) throw new Error(`schema_migrations holds a non-integer version: ${String(v)}`);
  return v;
};

/** Throws SchemaTooNewError when the database is ahead of this code. */
export const assertNotTooNew = async (db: Queryable): Promise<void> => {
  const v = await schemaVersion(db);
  refuseTooNew(v, LATEST_SCHEMA_VERSION);
};

/**
 * Applies the migrations the database lacks and returns how many. Runs on a client of its own (not a
 * pooled one, whose lock_timeout would cut short the wait for another process's migration), holding the
 * advisory lock throughout: a second process waits, then finds the versions applied and skips them.
 * Each migration commits with its bookkeeping row in one transaction (PostgreSQL's DDL is transactional),
 * so a failed migration leaves the previous version intact.
 */
export const migrate = async (client: pg.ClientBase, migrations: readonly Migration[] = loadMigrations()): Promise<number> => {
  await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY]);
  try {
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version    integer NOT NULL PRIMARY KEY,
      name       text NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now()
    )`);
    const current = await schemaVersion(client);
    refuseTooNew(current, LATEST_SCHEMA_VERSION);
    let applied = 0;
    for (const m of migrations) {
      if (m.version <= current) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (e) {
        await client.query('ROLLBACK').catch(() => undefined);
        // A migration that waits for a lock gives up rather than hold every statement on its table behind it (55P03,
        // its lock_timeout). Or PostgreSQL breaks a deadlock by ending it (40P01): a transaction of the service that
        // had read a table (a row locked FOR UPDATE) and then writes to it waits for the migration's index build, while
        // the migration's DROP INDEX waits for that transaction. Either way nothing was applied, and a rerun goes on.
        const code = (e as { code?: unknown }).code;
        if (code === '55P03' || code === '40P01')
          throw new Error(
            `migration ${m.version} (${m.name}) gave up waiting for a lock that open transactions hold${code === '40P01' ? ' (a deadlock with one of them)' : ''}; nothing of it was applied: run it again (esig migrate) once they have ended`,
            { cause: e },
          );
        throw e;
      }
      applied++;
    }
    return applied;
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]);
  }
};
