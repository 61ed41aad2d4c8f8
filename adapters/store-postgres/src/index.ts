import type { Clock, KeyAdmission, NewJobKinds, RateLimiter, Stores, UnitOfWork } from '@esig/core';
import { createJobSignal, noticingNewJobs } from '@esig/core';
import pg from 'pg';
import { createNestingGuard } from '@esig/store-sql';
import { TYPES, preparedStatements } from './connection.js';
import { assertNotTooNew, migrate, schemaVersion } from './migrations.js';
import type { NotifyHandler } from './notify.js';
import { createListener, notify } from './notify.js';
import { createPgRateLimiter } from './rate-limiter.js';
import { createPgKeyAdmission } from './key-admission.js';
import { bindStores } from './stores.js';
import { createUnitOfWork, poolConn } from './unit-of-work.js';
import { parseOnConnect } from './statement-batch.js';

export { LATEST_SCHEMA_VERSION, SchemaTooNewError } from './migrations.js';
export { RowDecodeError } from './decode.js';
export { JOBS_CHANNEL } from './jobs.js';
export type { NotifyHandler } from './notify.js';

/** An open PostgreSQL database behind the core's store ports. */
export interface PostgresStore {
  /**
   * Stores for use outside transactions, on the pool: every call is one statement, committed on its own.
   * Inside `uow.transaction` use the stores it passes instead; a write through these there fails.
   */
  readonly stores: Stores;
  /** READ COMMITTED transactions, each on a pooled connection of its own, running side by side. */
  readonly uow: UnitOfWork;
  /**
   * A sliding-window RateLimiter over `windowMs` shared by every process using this database. Time is the
   * database's clock unless `clock` is given (tests).
   */
  readonly rateLimiter: (windowMs: number, clock?: Clock) => RateLimiter;
  /**
   * The KeyAdmission over the same windows as `rateLimiter(windowMs)`: a request's API key found and its
   * call counted in one statement (one round trip instead of two on every authenticated request).
   */
  readonly keyAdmission: (windowMs: number, clock?: Clock) => KeyAdmission;
  /**
   * Calls `listener` right after each commit of this process (through `uow` or a top-level write) that
   * enqueued or revived a job, with the kinds it made claimable (`'any'` for a revived job), without the round
   * trip through the database; jobs enqueued by other processes arrive as NOTIFY on `JOBS_CHANNEL` (see
   * `listen`), with the job's kind as payload. Returns a function that stops.
   */
  onNewJobs(listener: (kinds: NewJobKinds) => void): () => void;
  /** Applies pending migrations under an advisory lock; returns how many. */
  migrate(): Promise<number>;
  /** The highest applied migration (0 for a new database). */
  schemaVersion(): Promise<number>;
  /**
   * Calls `onNotify` for every notification on `channel` (one dedicated connection serves all channels);
   * resolves once listening, to a function that stops. See `JOBS_CHANNEL` for the job queue's wake-ups.
   */
  listen(channel: string, onNotify: NotifyHandler): Promise<() => Promise<void>>;
  /** Notifies `channel` now (not inside a transaction). */
  notify(channel: string, payload?: string): Promise<void>;
  /** Stops listening and closes every connection once lent-out ones come back; calling it again is harmless. */
  close(): Promise<void>;
  /** The pool, for health checks and tooling; the stores need nothing done on it. */
  readonly pool: pg.Pool;
}

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database?…` */
  readonly url: string;
  /** Apply pending migrations on open (default true); `esig migrate` opens with false and calls `migrate()`. */
  readonly migrate?: boolean;
  /** Most connections the pool opens (default 10). The listener and migrations use one more each. */
  readonly poolSize?: number;
  /**
   * How long a pooled connection may sit idle before the pool closes it, in ms; 0, the default, keeps it open.
   * A connection opened again costs the next request a new backend (its start, and its catalog caches filled
   * again) and the parse of every prepared statement: with node-postgres's own default of 10 s, the requests
   * of a burst after a quiet spell waited up to 64–81 ms, where they take about 3 (docs/performance.md,
   * twenty-second round). Set it where connections to the database are scarcer than that latency. A dead idle
   * connection is dropped either way.
   */
  readonly idleTimeoutMs?: number;
  /**
   * How long a statement waits for a row lock another transaction holds before it fails, as
   * ConcurrentModification (default 5 s, or just under `statementTimeoutMs` when that is shorter): a store
   * signals a lost race rather than blocking for as long as a stuck transaction lives. Must be below
   * `statementTimeoutMs`.
   */
  readonly lockTimeoutMs?: number;
  /**
   * How long one statement of the pool may run before PostgreSQL cancels it, as a StoreFailure (default 30 s):
   * a runaway statement (a plan gone wrong, a wait no lock timeout covers) frees its connection, and the
   * requests and job loops queued behind it, instead of holding them for as long as it runs. The store's own
   * statements take milliseconds; migrations run on a connection of their own, without this limit. A pooled
   * connection that answers nothing for a second longer than this is given up (the driver's query timeout),
   * with a StoreFailure for the statements waiting on it.
   */
  readonly statementTimeoutMs?: number;
  /**
   * Refuse, with a StoreFailure at once, a transaction started inside a transaction's work, or a write
   * through the top-level `stores` there (default false). Without the check such a call runs on another
   * connection, outside the transaction, and waits until the lock timeout if it touches a row the
   * transaction holds. It finds a programming error; turn it on in tests and development. It costs: on
   * Node 20 it makes every promise of the process carry an AsyncLocalStorage's context.
   */
  readonly checkNesting?: boolean;
}

const LOCK_TIMEOUT_MS = 5_000;
const STATEMENT_TIMEOUT_MS = 30_000;
/**
 * How much longer than the statement timeout the driver waits for an answer before it gives the connection
 * up. The server ends a slow statement itself; this is for a connection that went silent (a peer gone
 * without a FIN: a failover, a dropped NAT entry), which would otherwise hold its callers forever, and with
 * them every call of the API key whose admission it carried (key-admission.ts sends one at a time).
 */
const QUERY_TIMEOUT_MARGIN_MS = 1_000;
/** How long a caller waits for a free pooled connection (or a new one) before failing. */
const ACQUIRE_TIMEOUT_MS = 30_000;

/**
 * Opens a pool on the database, checks the schema is not newer than this code (SchemaTooNewError) and,
 * unless told not to, migrates it. Pooled sessions carry a lock timeout and a statement timeout (startup
 * parameters: poolers in transaction mode, which would also break LISTEN and the migration lock, are not
 * supported).
 */
export const openPostgresStore = async (opts: PostgresStoreOptions): Promise<PostgresStore> => {
  const statementTimeoutMs = opts.statementTimeoutMs ?? STATEMENT_TIMEOUT_MS;
  // 0 would mean no limit to PostgreSQL; a limit is what this option is for.
  if (!Number.isSafeInteger(statementTimeoutMs) || statementTimeoutMs < 1 || statementTimeoutMs > 2_147_483_647)
    throw new RangeError(`statementTimeoutMs must be a whole number of milliseconds from 1 to 2147483647; got ${statementTimeoutMs}`);
  // A lock wait must end as a lost race (ConcurrentModification, which callers retry), not as a statement
  // cancelled for its time (a StoreFailure): the lock timeout stays below the statement timeout.
  if (opts.lockTimeoutMs !== undefined && opts.lockTimeoutMs >= statementTimeoutMs)
    throw new RangeError(`lockTimeoutMs (${opts.lockTimeoutMs}) must be below statementTimeoutMs (${statementTimeoutMs})`);
  const lockTimeoutMs = opts.lockTimeoutMs ?? Math.max(1, Math.min(LOCK_TIMEOUT_MS, statementTimeoutMs - 1));
  const idleTimeoutMs = opts.idleTimeoutMs ?? 0;
  if (!Number.isSafeInteger(idleTimeoutMs) || idleTimeoutMs < 0 || idleTimeoutMs > 2_147_483_647)
    throw new RangeError(`idleTimeoutMs must be a whole number of milliseconds from 0 (never) to 2147483647; got ${idleTimeoutMs}`);
  const clientConfig = (applicationName: string): pg.ClientConfig => ({
    connectionString: opts.url,
    types: TYPES,
    application_name: applicationName,
  });
  const pool = new pg.Pool({
    ...clientConfig('esig'),
    max: opts.poolSize ?? 10,
    lock_timeout: lockTimeoutMs,
    statement_timeout: statementTimeoutMs,
    connectionTimeoutMillis: ACQUIRE_TIMEOUT_MS,
    // node-postgres reads 0 as never.
    idleTimeoutMillis: idleTimeoutMs,
    // Capped at what a timer can hold.
    query_timeout: Math.min(statementTimeoutMs + QUERY_TIMEOUT_MARGIN_MS, 2_147_483_647),
    // TCP keepalives find a dead peer on an idle connection; the query timeout above, on a busy one.
    keepAlive: true,
    // Statements are sent without waiting for the answer to the one before: a transaction's first read goes
    // out with its BEGIN (see unit-of-work.ts). Each statement still has its own Sync, so one that fails
    // touches no other; nothing here keeps a portal open across round trips, which pipelining refuses.
    pipeline: true,
  });
  // An idle pooled connection that dies (server restart) is dropped by the pool; without a listener the
  // 'error' event would crash the process. The next statement on a fresh connection reports any outage.
  pool.on('error', () => undefined);
  // Every prepared statement parsed when a connection opens, in one round trip: a transaction's statements can
  // then go out as one batch from its first use of the connection (statement-batch.ts). On a schema older than
  // the code this fails and closes the connection; the schema's version is read on a connection of its own.
  pool.on('connect', (client) => parseOnConnect(client, preparedStatements()));

  // Migrations hold a session-level advisory lock and may wait long for another process's: a connection
  // of their own, outside the pool and its lock timeout.
  const withOwnClient = async <A>(f: (c: pg.Client) => Promise<A>): Promise<A> => {
    const c = new pg.Client(clientConfig('esig-migrate'));
    c.on('error', () => undefined);
    await c.connect();
    try {
      return await f(c);
    } finally {
      await c.end().catch(() => undefined);
    }
  };

  try {
    if (opts.migrate ?? true) await withOwnClient((c) => migrate(c));
    else await withOwnClient((c) => assertNotTooNew(c));
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw e;
  }

  const newJobs = createJobSignal();
  const nesting = createNestingGuard(opts.checkNesting ?? false);
  const uow = createUnitOfWork(pool, bindStores, newJobs.emit, nesting);
  const listener = createListener(() => new pg.Client(clientConfig('esig-listener')));
  let closing: Promise<void> | null = null;
  return {
    // A top-level write is one statement that commits on its own: a new job is there once it returns.
    // A top-level write commits on its own: its workers are told at once.
    stores: noticingNewJobs(bindStores(poolConn(pool, nesting)), (kind) => newJobs.emit(kind === 'any' ? 'any' : new Set([kind]))),
    uow,
    onNewJobs: newJobs.subscribe,
    rateLimiter: (windowMs, clock) => createPgRateLimiter(pool, windowMs, clock),
    keyAdmission: (windowMs, clock) => createPgKeyAdmission(pool, windowMs, clock),
    migrate: () => withOwnClient((c) => migrate(c)),
    schemaVersion: () => withOwnClient((c) => schemaVersion(c)),
    listen: (channel, onNotify) => listener.listen(channel, onNotify),
    notify: (channel, payload) => notify(pool, channel, payload),
    close: () =>
      (closing ??= (async () => {
        await listener.close();
        await pool.end();
      })()),
    pool,
  };
};
