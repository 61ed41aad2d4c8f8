import type { Clock, JobKind, KeyAdmission, NewJobKinds, RateLimiter, Stores, UnitOfWork } from '@esig/core';
import { IDEMPOTENCY_PURGE_BATCH, JOB_KINDS, UNUSED_OAUTH_CLIENT_PURGE_BATCH, composeKeyAdmission } from '@esig/core';
import { createMemoryRateLimiter } from '@esig/ratelimit-memory';
import { JOBS_CHANNEL, LATEST_SCHEMA_VERSION as POSTGRES_SCHEMA_VERSION, openPostgresStore } from '@esig/store-postgres';
import { LATEST_SCHEMA_VERSION as SQLITE_SCHEMA_VERSION, SQLITE_IDEMPOTENCY_PURGE_BATCH, openSqliteStore } from '@esig/store-sqlite';
import type { ServerConfig } from './config.js';

/** The open database, whichever store adapter serves it. */
export interface Database {
  readonly kind: 'sqlite' | 'postgres';
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  /**
   * The rate limiter fitting the deployment: in memory for the single SQLite process; in PostgreSQL, shared
   * by every API process, for several.
   */
  rateLimiter(windowMs: number, clock: Clock): RateLimiter;
  /**
   * A request's API key found and its call counted against `rateLimiter`'s windows: in two steps on SQLite
   * (whose key lookups are cached in memory), in one statement on PostgreSQL.
   */
  keyAdmission(windowMs: number, rateLimiter: RateLimiter): KeyAdmission;
  /**
   * Expired idempotency records the workers' purge deletes per batch: small on SQLite, whose DELETE holds the
   * event loop; the core's default on PostgreSQL, where it runs in the database while the process goes on.
   */
  readonly idempotencyPurgeBatch: number;
  /** Unused OAuth clients the workers' purge deletes per batch: small on SQLite for the same reason. */
  readonly oauthClientPurgeBatch: number;
  /**
   * Calls `onWork` with the new jobs' kinds right after a transaction of this process that enqueued a job
   * commits and, with PostgreSQL, when another process enqueues one (LISTEN/NOTIFY); resolves, once listening,
   * to a function that stops. With SQLite another process's jobs (`esig worker` beside `esig serve`) wait for
   * the poll.
   */
  readonly onNewJobs: (onWork: (kinds: NewJobKinds) => void) => Promise<() => Promise<void>>;
  migrate(): Promise<number>;
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The kinds a NOTIFY on JOBS_CHANNEL names: the job's kind, its payload. Anything else (the '' of a listener
 * that reconnected and may have missed some, or a payload this version does not know) wakes every worker.
 */
export const notifiedKinds = (payload: string): NewJobKinds =>
  (JOB_KINDS as readonly string[]).includes(payload) ? new Set([payload as JobKind]) : 'any';

/**
 * The database has not been migrated to this code's schema, and this process was not to migrate it
 * (`ESIG_AUTO_MIGRATE=false`). Code newer than its schema fails on the first statement that needs a newer
 * table or function, so the process refuses to start instead.
 */
export class SchemaTooOldError extends Error {
  override readonly name = 'SchemaTooOldError';
  readonly code = 'ESIG_SCHEMA_TOO_OLD';
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(`the database schema is at version ${databaseVersion}, older than this code's ${codeVersion}`);
  }
}

/**
 * Opens the database `ESIG_DATABASE_URL` names; refuses a schema newer than this code, and, unless it migrates
 * on open or `requireCurrent` is false (`esig migrate` itself), one older (SchemaTooOldError).
 */
export const openDatabase = async (config: ServerConfig, migrateOnOpen = config.autoMigrate, requireCurrent = true): Promise<Database> => {
  const db = await openStore(config, migrateOnOpen);
  if (migrateOnOpen || !requireCurrent) return db;
  const latest = db.kind === 'sqlite' ? SQLITE_SCHEMA_VERSION : POSTGRES_SCHEMA_VERSION;
  const version = await db.schemaVersion().catch(async (e: unknown) => {
    await db.close();
    throw e;
  });
  if (version >= latest) return db;
  await db.close();
  throw new SchemaTooOldError(version, latest);
};

const openStore = async (config: ServerConfig, migrateOnOpen: boolean): Promise<Database> => {
  if (config.database.kind === 'sqlite') {
    const db = openSqliteStore({ path: config.database.path, migrate: migrateOnOpen, checkNesting: config.checkTransactions });
    return {
      kind: 'sqlite',
      stores: db.stores,
      uow: db.uow,
      rateLimiter: (windowMs, clock) => createMemoryRateLimiter(clock, windowMs),
      keyAdmission: (_windowMs, rateLimiter) => composeKeyAdmission(db.stores.apiKeys, rateLimiter),
      idempotencyPurgeBatch: SQLITE_IDEMPOTENCY_PURGE_BATCH,
      // A batch's DELETE checks each client in two indexes: about the cost of a batch of idempotency records.
      oauthClientPurgeBatch: SQLITE_IDEMPOTENCY_PURGE_BATCH,
      onNewJobs: async (onWork) => {
        const stop = db.onNewJobs(onWork);
        return async () => stop();
      },
      migrate: async () => db.migrate(),
      schemaVersion: async () => db.schemaVersion(),
      close: async () => db.close(),
    };
  }
  const db = await openPostgresStore({
    url: config.database.url,
    migrate: migrateOnOpen,
    poolSize: config.databasePoolSize,
    idleTimeoutMs: config.databaseIdleTimeoutMs,
    statementTimeoutMs: config.databaseStatementTimeoutMs,
    checkNesting: config.checkTransactions,
  });
  return {
    kind: 'postgres',
    stores: db.stores,
    uow: db.uow,
    // The database's clock, so every process counts in the same time.
    rateLimiter: (windowMs) => db.rateLimiter(windowMs),
    // The same windows as `rateLimiter`, which live in the database.
    keyAdmission: (windowMs) => db.keyAdmission(windowMs),
    idempotencyPurgeBatch: IDEMPOTENCY_PURGE_BATCH,
    oauthClientPurgeBatch: UNUSED_OAUTH_CLIENT_PURGE_BATCH,
    onNewJobs: async (onWork) => {
      const stopLocal = db.onNewJobs(onWork);
      const stopListening = await db.listen(JOBS_CHANNEL, (payload) => onWork(notifiedKinds(payload))).catch((e: unknown) => {
        stopLocal();
        throw e;
      });
      return async () => {
        stopLocal();
        await stopListening();
      };
    },
    migrate: () => db.migrate(),
    schemaVersion: () => db.schemaVersion(),
    close: () => db.close(),
  };
};
