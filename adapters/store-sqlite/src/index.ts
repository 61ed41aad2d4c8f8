import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { NewJobKinds, Stores, UnitOfWork } from '@esig/core';
import { createJobSignal } from '@esig/core';
import { createNestingGuard } from '@esig/store-sql';
import { BACKSTOP_AUTOCHECKPOINT_PAGES, startCheckpointer } from './checkpointer.js';
import { createConn, openDatabase } from './connection.js';
import { createKeyCache } from './key-cache.js';
import { assertNotTooNew, migrate, schemaVersion } from './migrations.js';
import { bindStores, topLevelStores } from './stores.js';
import { DEFAULT_CONTENT_OPTIONS, PIECE_BYTES } from './document-contents.js';
export { PIECE_BYTES } from './document-contents.js';
import { createUnitOfWork } from './unit-of-work.js';

export { LATEST_SCHEMA_VERSION, SchemaTooNewError } from './migrations.js';

/**
 * Expired idempotency records to delete per batch on this store (`purgeExpiredIdempotencyRecords`, `startPurger`).
 * better-sqlite3 runs the DELETE on the event loop that the process's API and workers share: 1,000 records held
 * it for 3.5–4.8 ms, 100 for 0.5–0.7 ms. A run of a day's backlog is a batch after another with one turn of the
 * loop between, so the batch is the longest a purge holds the process.
 */
export const SQLITE_IDEMPOTENCY_PURGE_BATCH = 100;
export { RowDecodeError } from './decode.js';

/** An open SQLite database behind the core's store ports. */
export interface SqliteStore {
  /**
   * Stores for use outside transactions. Reads see committed data only (a separate read connection).
   * Each write commits on its own, queued behind running transactions; writes that must commit together
   * belong in `uow.transaction`, whose `tx` stores must be used instead of these inside it.
   */
  readonly stores: Stores;
  /** Serialized transactions on the write connection. */
  readonly uow: UnitOfWork;
  /**
   * Calls `listener` right after each commit (through `uow` or a top-level write) that enqueued or revived a
   * job, with the kinds it made claimable (`'any'` for a revived job): the wake-up of this process's workers
   * that serve them. Other processes on the same file are not told; they poll. Returns a function that stops.
   */
  onNewJobs(listener: (kinds: NewJobKinds) => void): () => void;
  /** Applies pending migrations; returns how many. Call at startup, not while transactions run. */
  migrate(): number;
  /** The highest applied migration (0 for a new database). */
  schemaVersion(): number;
  /** Closes both connections; a transaction still running fails with a StoreFailure. */
  close(): void;
}

export interface SqliteStoreOptions {
  /** Database file; its folder is created if missing. `:memory:` is refused: it cannot be shared by two connections. */
  readonly path: string;
  /** Apply pending migrations on open (default true); `esig migrate` opens with false and calls `migrate()`. */
  readonly migrate?: boolean;
  /**
   * Who checkpoints the WAL into the database file. `background` (the default): a thread of the store's own,
   * every 100 ms, so the event loop never waits for a checkpoint's copy and fsyncs; the write connection
   * keeps SQLite's automatic checkpoint only as a backstop, at 10,000 pages. `inline`: SQLite's default,
   * the write connection itself every 1,000 pages, blocking the event loop while it runs.
   */
  readonly checkpoint?: 'background' | 'inline';
  /**
   * Told when the background checkpointer fails (once per distinct message; it tries again every 100 ms,
   * and the backstop remains). Default: a process warning.
   */
  readonly onCheckpointError?: (message: string) => void;
  /**
   * Refuse, with a StoreFailure at once, a transaction started inside a transaction's work, or a write
   * through the top-level `stores` there (default false). Without the check such a call waits forever
   * behind the transaction that waits for it, and every later write of the process waits behind both.
   * It finds a programming error; turn it on in tests and development. It costs: on Node 20 it makes every
   * promise of the process carry an AsyncLocalStorage's context, about a tenth more CPU per API request.
   */
  readonly checkNesting?: boolean;
  /**
   * Where the write connection keeps the page copies of its savepoints and statement journals. `memory` (the
   * default): in memory, where they last until the outermost savepoint ends and hold at most the pages it
   * changed. `file`: SQLite's default, in memory up to 64 KiB and then in a temporary file for the rest of the
   * transaction. A group commit puts many transactions' savepoints in one SQLite transaction, and once one of
   * them had spilled, every page the rest copied was a `pwrite` to that file: 2.6 system calls per plain
   * create-request, 6 with an Idempotency-Key. Migrations run with `file` whichever is set: in memory, SQLite
   * would also sort a new index of a large table there whole.
   */
  readonly statementJournals?: 'memory' | 'file';
  /**
   * Bytes per piece of content staged ahead of its transaction (default 256 KiB, `PIECE_BYTES`): each piece is
   * written and committed on its own, so that no single write grows with a document. Tests make it small.
   */
  readonly contentPieceBytes?: number;
}

/**
 * Whether `ANALYZE` has left samples in the file (`sqlite_stat4`, kept by the SQLite better-sqlite3 builds). SQLite
 * then weighs the bound value of every parameter that meets an index when it plans, so it prepares such a statement
 * again whenever the parameter is bound anew: at every run (see `limitParam`). esig never runs `ANALYZE` on SQLite;
 * its statements are written to take the right index without statistics.
 */
const hasStat4Samples = (db: ReturnType<typeof openDatabase>): boolean =>
  db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sqlite_stat4'").get() !== undefined &&
  db.prepare('SELECT 1 FROM sqlite_stat4 LIMIT 1').get() !== undefined;

/**
 * Opens (creating if needed) a SQLite database in WAL mode with two connections: one that only
 * transactions write on, and one for reads outside them. Ports are asynchronous, so while a transaction
 * awaits between statements other requests run; reading on the write connection would show them its
 * uncommitted rows. Throws SchemaTooNewError when the database was migrated by newer code.
 */
export const openSqliteStore = (opts: SqliteStoreOptions): SqliteStore => {
  if (opts.path === '' || opts.path === ':memory:' || opts.path.startsWith('file::memory:'))
    throw new Error('openSqliteStore needs a file path: an in-memory database cannot be shared by its two connections.');
  mkdirSync(dirname(resolve(opts.path)), { recursive: true });
  const journals = (db: ReturnType<typeof openDatabase>) => db.pragma(`temp_store = ${(opts.statementJournals ?? 'memory') === 'memory' ? 'MEMORY' : 'DEFAULT'}`);
  const writeDb = openDatabase(opts.path, 'write');
  const readDb = (() => {
    try {
      assertNotTooNew(writeDb);
      if (opts.migrate ?? true) migrate(writeDb);
      journals(writeDb);
      return openDatabase(opts.path, 'read');
    } catch (e) {
      writeDb.close();
      throw e;
    }
  })();
  const onCheckpointError = opts.onCheckpointError ?? ((m: string) => process.emitWarning(`esig SQLite background checkpoint failed: ${m}`));
  if (hasStat4Samples(writeDb))
    process.emitWarning(
      `esig: ${opts.path} holds statistics from ANALYZE (sqlite_stat4). With them SQLite prepares most of esig's statements again at every run ` +
        '(a prepare costs more than most runs), and no statement of esig needs them. Remove them (DELETE FROM sqlite_stat4) and restart.',
      { code: 'ESIG_SQLITE_STAT4' },
    );
  const checkpointer =
    (opts.checkpoint ?? 'background') === 'background'
      ? (() => {
          try {
            const started = startCheckpointer(opts.path, onCheckpointError);
            // Only once the thread is there: without it, SQLite's own checkpoint every 1,000 pages stays.
            writeDb.pragma(`wal_autocheckpoint = ${BACKSTOP_AUTOCHECKPOINT_PAGES}`);
            return started;
          } catch (e) {
            // No thread to be had (a runtime that refuses them): the store still works, checkpointing inline.
            onCheckpointError(String(e));
            return null;
          }
        })()
      : null;
  const write = createConn(writeDb);
  const read = createConn(readDb);
  const newJobs = createJobSignal();
  const keys = createKeyCache(write);
  const pieceBytes = opts.contentPieceBytes ?? PIECE_BYTES;
  if (!Number.isSafeInteger(pieceBytes) || pieceBytes < 1) throw new RangeError(`contentPieceBytes must be a whole number of at least 1; got ${pieceBytes}`);
  const contents = { ...DEFAULT_CONTENT_OPTIONS, pieceBytes, ...(checkpointer === null ? {} : { settle: () => checkpointer.checkpointed() }) };
  const uow = createUnitOfWork(
    write,
    (conn) => bindStores(conn, { cache: keys, role: 'write' }, contents),
    newJobs.emit,
    keys.transactionEnded,
    createNestingGuard(opts.checkNesting ?? false),
  );
  return {
    stores: topLevelStores(read, uow, keys, contents),
    uow,
    onNewJobs: newJobs.subscribe,
    migrate: () => {
      writeDb.pragma('temp_store = DEFAULT');
      try {
        return migrate(writeDb);
      } finally {
        journals(writeDb);
      }
    },
    schemaVersion: () => schemaVersion(writeDb),
    close: () => {
      // The write connection closes last: the last connection to close checkpoints the WAL into the file
      // and removes it. The checkpointer's thread has closed its own by the time stop() returns.
      checkpointer?.stop();
      readDb.close();
      writeDb.close();
    },
  };
};
