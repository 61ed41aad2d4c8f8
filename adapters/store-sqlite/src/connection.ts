import Database from 'better-sqlite3';
import type { StoreError, StoreResult } from '@esig/core';
import { storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';

/**
 * How long a connection waits for another process's write lock before failing with SQLITE_BUSY. The
 * driver is synchronous, so the wait blocks the event loop: it only happens when a second process (a
 * CLI, `esig worker`) writes at the same moment, never between this process's own transactions.
 */
export const BUSY_TIMEOUT_MS = 5_000;

/** A connection as the stores use it: the driver handle, a statement cache, and whether it is usable. */
export interface Conn {
  readonly db: Database.Database;
  /** Prepares each SQL text once per connection: the same few statements run all the time. */
  prepare(sql: string): Database.Statement;
  /** Why this handle must not be used now (its transaction has ended), or `null` when it may. */
  unusable(): Error | null;
}

/** Wraps a driver connection; `unusable` defaults to "always usable". */
export const createConn = (db: Database.Database, unusable: () => Error | null = () => null): Conn => {
  const cache = new Map<string, Database.Statement>();
  return {
    db,
    unusable,
    prepare: (sql) => {
      let stmt = cache.get(sql);
      if (stmt === undefined) {
        stmt = db.prepare(sql);
        cache.set(sql, stmt);
      }
      return stmt;
    },
  };
};

/** Shares one statement cache between handles of the same connection that differ only in `unusable`. */
export const withGuard = (conn: Conn, unusable: () => Error | null): Conn => ({ ...conn, unusable });

/**
 * Opens one connection with the pragmas every connection needs. `role: 'read'` additionally makes the
 * connection refuse writes, so a write routed to it by mistake fails loudly instead of racing the writer.
 */
export const openDatabase = (path: string, role: 'write' | 'read'): Database.Database => {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  try {
    // WAL lets the read connection see the last committed state while the write connection is inside a
    // transaction; readers and the writer never block each other.
    const journal = db.pragma('journal_mode = WAL', { simple: true });
    if (journal !== 'wal') throw new Error(`SQLite refused WAL mode for ${path} (journal_mode is ${String(journal)})`);
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('foreign_keys = ON');
    // In WAL mode NORMAL is still crash-safe (a power loss may lose the last commits, never corrupt).
    db.pragma('synchronous = NORMAL');
    if (role === 'read') db.pragma('query_only = ON');
    return db;
  } catch (e) {
    db.close();
    throw e;
  }
};

/** True for a violated PRIMARY KEY or UNIQUE constraint, judged by SQLite's extended result code. */
export const isUniqueViolation = (e: unknown): boolean =>
  e instanceof Database.SqliteError && (e.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || e.code === 'SQLITE_CONSTRAINT_UNIQUE');

/**
 * The driver edge: runs synchronous driver calls when the task runs (not when it is built), and turns a
 * thrown driver error into a StoreError. A uniqueness violation becomes `onUniqueViolation()` when given,
 * because for some inserts it means "someone else got there first" rather than a fault.
 */
export const attempt =
  <A>(conn: Conn, f: (conn: Conn) => A, onUniqueViolation?: () => StoreError): StoreResult<A> =>
  () => {
    const blocked = conn.unusable();
    if (blocked !== null) return Promise.resolve(E.left(storeFailure(blocked)));
    return Promise.resolve(
      E.tryCatch(
        () => f(conn),
        (e): StoreError => (onUniqueViolation !== undefined && isUniqueViolation(e) ? onUniqueViolation() : storeFailure(e)),
      ),
    );
  };
