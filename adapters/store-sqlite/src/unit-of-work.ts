import { AsyncLocalStorage } from 'node:async_hooks';
import type { StoreError, Stores, UnitOfWork } from '@esig/core';
import { noticingNewJobs, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { Conn } from './connection.js';
import { withGuard } from './connection.js';

/**
 * A FIFO queue that runs one job at a time. SQLite has one writer per database, and this process has one
 * write connection: transactions must take turns on it, and a promise chain is the cheapest fair lock.
 */
export const createSerialQueue = () => {
  let tail: Promise<unknown> = Promise.resolve();
  return <A>(job: () => Promise<A>): Promise<A> => {
    const run = tail.then(job);
    // The next job waits for this one to settle, however it settles.
    tail = run.then(
      () => undefined,
      () => undefined,
    );
    return run;
  };
};

interface TxScope {
  active: boolean;
  /** The work enqueued or revived a job: its commit wakes this process's workers. */
  newJobs: boolean;
}

/**
 * Marks the async context of a running transaction's work. A transaction started from inside another
 * would wait in the queue behind the very transaction that waits for it; detecting it turns that silent
 * deadlock into an immediate error.
 */
const currentTx = new AsyncLocalStorage<TxScope>();

const ended = () => new Error('This transaction has ended; its stores can no longer be used.');

/**
 * The UnitOfWork over the write connection. Each transaction, in turn: `BEGIN IMMEDIATE` (take the write
 * lock now, so a transaction never fails half-way on a lock upgrade), run `work` with stores bound to
 * the write connection, then `COMMIT` on Right, `ROLLBACK` on Left or on a throw or rejection (which
 * becomes a StoreFailure). Because transactions are serialized, a read-modify-write inside one sees the
 * latest committed state and no other transaction interleaves with it. After a commit that enqueued or
 * revived a job, `onNewJobs` runs (waking this process's workers at once instead of at their next poll).
 */
export const createUnitOfWork = (write: Conn, bind: (conn: Conn) => Stores, onNewJobs: () => void = () => undefined): UnitOfWork => {
  const enqueue = createSerialQueue();
  const db = write.db;

  const rollback = (): E.Either<StoreError, void> =>
    E.tryCatch(
      () => {
        // SQLite rolls back by itself on some errors (disk full, I/O); ROLLBACK then would throw.
        if (db.inTransaction) db.exec('ROLLBACK');
      },
      (e) => storeFailure(e),
    );

  const commit = (): E.Either<StoreError, void> => {
    if (!db.inTransaction)
      return E.left(storeFailure(new Error('SQLite ended the transaction before COMMIT (after an error inside it); nothing was committed.')));
    const done = E.tryCatch(
      () => void db.exec('COMMIT'),
      (e) => storeFailure(e),
    );
    if (E.isLeft(done)) rollback();
    return done;
  };

  const runOne = async <Err, A>(work: (tx: Stores) => TE.TaskEither<Err, A>): Promise<E.Either<Err | StoreError, A>> => {
    const begun = E.tryCatch(
      () => void db.exec('BEGIN IMMEDIATE'),
      (e) => storeFailure(e),
    );
    if (E.isLeft(begun)) return begun;
    const scope: TxScope = { active: true, newJobs: false };
    // The guard makes stores that escape `work` (kept in a closure, used by a timer) fail instead of
    // writing into whatever transaction runs next on this connection.
    const tx = noticingNewJobs(
      bind(withGuard(write, () => (scope.active ? null : ended()))),
      () => void (scope.newJobs = true),
    );
    const outcome = await TE.tryCatch(
      () => currentTx.run(scope, () => work(tx)()),
      (e) => storeFailure(e),
    )();
    scope.active = false;
    const result: E.Either<Err | StoreError, A> = E.flattenW(outcome);
    if (E.isRight(result)) {
      const committed = commit();
      if (E.isLeft(committed)) return committed;
      if (scope.newJobs) onNewJobs();
      return result;
    }
    const rolledBack = rollback();
    // A failed ROLLBACK leaves the connection unusable; that is the fault worth reporting.
    return E.isLeft(rolledBack) ? rolledBack : result;
  };

  return {
    // One write connection, transactions in turn, and BEGIN IMMEDIATE holds the database's write lock
    // against other processes: no transaction ever interleaves with another.
    serial: true,
    transaction:
      <Err, A>(work: (tx: Stores) => TE.TaskEither<Err, A>): TE.TaskEither<Err | StoreError, A> =>
      () =>
        currentTx.getStore()?.active === true
          ? Promise.resolve(
              E.left(
                storeFailure(
                  new Error('A transaction was started, or a top-level store written, inside a running transaction; use the stores it passes to its work.'),
                ),
              ),
            )
          : enqueue(() => runOne(work)),
  };
};
