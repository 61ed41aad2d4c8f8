import type { NewJobKinds, NewJobKindsNoted, StoreError, Stores, TransactionOptions, UnitOfWork } from '@esig/core';
import { createNewJobKinds, noticingNewJobs, storeFailure } from '@esig/core';
import type { NestingGuard } from '@esig/store-sql';
import { createNestingGuard } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { withGuard } from './connection.js';

interface TxScope {
  active: boolean;
  /** The jobs the work enqueued or revived: its commit wakes this process's workers that serve them. */
  readonly newJobs: NewJobKindsNoted;
}

const ended = () => new Error('This transaction has ended; its stores can no longer be used.');
const endedBySqlite = () => new Error('SQLite ended this transaction under its work (after an error inside it: disk full, I/O; or the connection closed); nothing of it will be committed.');

/** A transaction waiting for the writer: its work, and how to answer whoever started it. */
interface Pending {
  readonly work: (tx: Stores) => TE.TaskEither<unknown, unknown>;
  readonly settle: (r: E.Either<unknown, unknown>) => void;
  /** `TransactionOptions.rerunnable`: the work may run again from the start if the group is undone. */
  readonly rerunnable: boolean;
}

/** What a group left to run next: members it did not get to, or a whole group to run again with savepoints. */
interface Leftover {
  readonly members: Pending[];
  /** Run each of them (after the first) in a savepoint: they are a group that was undone and runs again. */
  readonly guarded: boolean;
}

const NONE: Leftover = { members: [], guarded: false };
const notRun = (members: Pending[]): Leftover => ({ members, guarded: false });

/**
 * At most this many transactions to a group, so its first ones are not kept waiting long for its last.
 * (A count, not a time: a group's make-up then never depends on how busy the machine is.)
 */
const MAX_GROUP = 32;

/**
 * The UnitOfWork over the write connection. Transactions take turns on it: each runs `work` with stores
 * bound to the write connection and commits on Right, rolls back on Left or on a throw or rejection (which
 * becomes a StoreFailure). Because they run one at a time, a read-modify-write inside one sees the latest
 * state and no other transaction interleaves with it.
 *
 * Group commit: the transactions started in one turn of the event loop, or while the writer was busy, run
 * next as one group, inside one `BEGIN IMMEDIATE` … `COMMIT`. A COMMIT (the WAL write) is most of what a
 * small transaction costs, and under load it is now shared. Each transaction still runs alone and in order,
 * and one that fails leaves the others alone:
 * - the first runs without a savepoint: when it fails, the whole transaction is rolled back before any other
 *   has run, and the rest run as the next group;
 * - a later one runs in a savepoint of its own and, when it fails, is rolled back to it; except that work
 *   that may run again (`rerunnable`, as every command is), following only such work, runs without one. When
 *   it fails having written nothing, there is nothing to undo; when it fails after writing, the whole group
 *   is rolled back and runs again, each member after the first in a savepoint. A savepoint costs a copy of
 *   every existing page its member changes, and an idempotent create-request changes enough pages to move
 *   those copies to a temporary file: two thirds of its writes to disk, for failures that are rare.
 * Nobody hears of a success before the group's COMMIT has returned, so a crash loses only transactions that
 * were never answered, and nobody hears of a run that was undone. If the COMMIT itself fails, every
 * transaction of the group gets that failure.
 *
 * `BEGIN IMMEDIATE` takes the write lock at once, so a transaction never fails half-way on a lock upgrade.
 * After a commit that enqueued or revived a job, `onNewJobs` runs (waking this process's workers at once
 * instead of at their next poll).
 */
export const createUnitOfWork = (
  write: Conn,
  bind: (conn: Conn) => Stores,
  onNewJobs: (kinds: NewJobKinds) => void = () => undefined,
  /**
   * When a transaction (a group) has ended, committed, rolled back or lost, before anyone in it is answered:
   * where the API-key cache drops its entries after a revocation (key-cache.ts).
   */
  onTransactionEnd: () => void = () => undefined,
  /**
   * Whether code runs inside a transaction's work. A transaction started there would wait in the queue
   * behind the very transaction that waits for it; with a guard that tracks it (the store's `checkNesting`),
   * that silent deadlock is an immediate error instead.
   */
  nesting: NestingGuard = createNestingGuard(false),
): UnitOfWork => {
  const db = write.db;
  const waiting: Pending[] = [];
  let draining = false;

  // From the connection's statement cache: parsing these on every transaction is a measurable share of a small one.
  const statement =
    (sql: string) =>
    (): E.Either<StoreError, void> =>
      E.tryCatch(
        () => void write.prepare(sql).run(),
        (e) => storeFailure(e),
      );
  const begin = statement('BEGIN IMMEDIATE');
  const commitStmt = statement('COMMIT');
  const savepoint = statement('SAVEPOINT member');
  const release = statement('RELEASE member');
  const rollbackTo = statement('ROLLBACK TO member');
  // Rows changed by the connection's statements so far: a member that failed and changed none left nothing
  // to undo. (Every write of a store is an INSERT, UPDATE or DELETE, which this counts.)
  // `null` when it cannot be read: then the member is taken to have written.
  const changes = (): number | null => {
    try {
      return write.prepare('SELECT total_changes()').pluck().get() as number;
    } catch {
      return null;
    }
  };

  const rollback = (): E.Either<StoreError, void> =>
    E.tryCatch(
      () => {
        try {
          // SQLite rolls back by itself on some errors (disk full, I/O); ROLLBACK then would throw.
          if (db.inTransaction) db.exec('ROLLBACK');
        } finally {
          onTransactionEnd();
        }
      },
      (e) => storeFailure(e),
    );

  const commit = (): E.Either<StoreError, void> => {
    if (!db.inTransaction) {
      onTransactionEnd();
      return E.left(storeFailure(new Error('SQLite ended the transaction before COMMIT (after an error inside it); nothing was committed.')));
    }
    const done = commitStmt();
    if (E.isLeft(done)) rollback();
    else onTransactionEnd();
    return done;
  };

  /** Runs one transaction's work on the open transaction; its scope says whether it enqueued jobs. */
  const runWork = async (work: Pending['work'], scope: TxScope): Promise<E.Either<unknown, unknown>> => {
    // The guard makes stores that escape `work` (kept in a closure, used by a timer) fail instead of
    // writing into whatever transaction runs next on this connection. It also fails every statement once
    // SQLite has rolled the transaction back by itself (disk full, I/O): the connection is then in autocommit
    // mode, and a write by work that swallowed the error would commit on its own while the transaction
    // reports that nothing was.
    const tx = noticingNewJobs(
      bind(withGuard(write, () => (!scope.active ? ended() : db.inTransaction ? null : endedBySqlite()))),
      scope.newJobs.note,
    );
    const outcome = await TE.tryCatch(
      () => nesting.run(scope, () => work(tx)()),
      (e) => storeFailure(e),
    )();
    scope.active = false;
    return E.flattenW(outcome);
  };

  /**
   * The transactions of a group (one or more) in one, one COMMIT for all. Returns what is left to run next:
   * the members it did not get to (SQLite ended the transaction under one of them), or the whole group, to
   * run again with savepoints (`guarded`) after a member without one failed having written.
   */
  const runGroup = async (group: Pending[], guarded: boolean): Promise<Leftover> => {
    const begun = begin();
    if (E.isLeft(begun)) {
      for (const p of group) p.settle(begun);
      return NONE;
    }
    const held: Array<{ p: Pending; result: E.Either<unknown, unknown> }> = [];
    // Members that failed, answered only when the group ends: each answer may rest on what the members before
    // it wrote, which a group undone and run again would take back (and run it again too).
    const failed: Array<{ p: Pending; result: E.Either<unknown, unknown> }> = [];
    const newJobs = createNewJobKinds();
    const answerFailed = () => {
      for (const f of failed) f.p.settle(f.result);
      failed.length = 0;
    };
    const abandon = (e: StoreError) => {
      for (const h of held) h.p.settle(E.left(e));
      held.length = 0;
      answerFailed();
    };
    // Whether every member run so far may run again. A member that may too then goes without a savepoint:
    // should it fail after writing, undoing the whole group and running it again loses nothing. Once a member
    // that must run once has run, held or failed, the rest have savepoints: the group is never undone again.
    let undoable = !guarded;
    for (let i = 0; i < group.length; i++) {
      const p = group[i]!;
      // The first member needs no savepoint either: nothing of the group is in the transaction before it, so
      // when it fails the whole transaction is rolled back and the rest run as a group of their own. A
      // savepoint is not free: SQLite keeps a copy of every page a member changes under one (its statement
      // journal, which goes to a temporary file past 64 KiB), and a lone transaction, the usual case below
      // peak load, has no other member to protect.
      const first = i === 0;
      undoable = undoable && p.rerunnable;
      const bare = first || undoable;
      const marked = bare ? E.right(undefined) : savepoint();
      if (E.isLeft(marked)) {
        rollback();
        abandon(marked.left);
        return notRun(group.slice(i));
      }
      const before = bare && !first ? changes() : null;
      const scope: TxScope = { active: true, newJobs: createNewJobKinds() };
      const result = await runWork(p.work, scope);
      if (!db.inTransaction) {
        // SQLite rolled the whole transaction back (disk full, I/O error): the members before this one
        // are lost with it and fail; this one fails with its own error; the rest run afresh.
        onTransactionEnd();
        const lost = storeFailure(new Error('SQLite rolled back the transaction this one was grouped with; nothing was committed.'));
        abandon(lost);
        p.settle(E.isLeft(result) ? result : E.left(lost));
        return notRun(group.slice(i + 1));
      }
      if (first && E.isLeft(result)) {
        // Its writes go with the transaction; the rest, not yet run, start afresh as the next group (whose
        // BEGIN fails them, should this ROLLBACK have left the connection in a transaction).
        rollback();
        p.settle(result);
        return { members: group.slice(1), guarded };
      }
      if (bare && !first && E.isLeft(result)) {
        const after = changes();
        if (before === null || after === null || after !== before) {
          // It wrote, then failed, and only undoing the whole transaction undoes its writes. Every member run
          // so far may run again, and none has been answered: the group starts over, guarded.
          rollback();
          return { members: group, guarded: true };
        }
        failed.push({ p, result }); // It changed nothing: nothing to undo, and the others' writes stay.
        continue;
      }
      const closed = bare ? E.right(undefined) : E.isRight(result) ? release() : E.flatMap(rollbackTo(), release);
      if (E.isLeft(closed)) {
        rollback();
        abandon(closed.left);
        p.settle(closed);
        return notRun(group.slice(i + 1));
      }
      if (E.isRight(result)) {
        held.push({ p, result });
        newJobs.merge(scope.newJobs.taken());
      } else failed.push({ p, result }); // Its writes are undone; the others' stay.
    }
    // Every member failed (and was rolled back to its savepoint, or wrote nothing): nothing to commit.
    if (held.length === 0) {
      rollback();
      answerFailed();
      return NONE;
    }
    const committed = commit();
    for (const h of held) h.p.settle(E.isLeft(committed) ? committed : h.result);
    answerFailed();
    const made = newJobs.taken();
    if (E.isRight(committed) && made !== null) onNewJobs(made);
    return NONE;
  };

  const drain = async () => {
    draining = true;
    try {
      let guarded = false;
      while (waiting.length > 0) {
        // A group to run again is at the head of the queue, and no longer than a group: it is the next group.
        const left = await runGroup(waiting.splice(0, MAX_GROUP), guarded);
        waiting.unshift(...left.members);
        guarded = left.guarded && left.members.length > 0;
      }
    } finally {
      draining = false;
    }
  };

  let scheduled = false;
  const submit = <Err, A>(work: (tx: Stores) => TE.TaskEither<Err, A>, rerunnable: boolean): Promise<E.Either<Err | StoreError, A>> =>
    new Promise((resolve) => {
      waiting.push({ work, settle: resolve as Pending['settle'], rerunnable });
      if (draining || scheduled) return;
      // Start after the I/O callbacks of this turn of the event loop: the requests that arrived together
      // then reach the writer together and share a COMMIT. (A transaction's own statements are synchronous,
      // so without this pause each would commit before the next request was even read.)
      scheduled = true;
      setImmediate(() => {
        scheduled = false;
        void drain();
      });
    });

  return {
    // One write connection, transactions in turn, and BEGIN IMMEDIATE holds the database's write lock
    // against other processes: no transaction ever interleaves with another.
    serial: true,
    transaction:
      <Err, A>(work: (tx: Stores) => TE.TaskEither<Err, A>, options?: TransactionOptions): TE.TaskEither<Err | StoreError, A> =>
      () =>
        nesting.inside()
          ? Promise.resolve(
              E.left(
                storeFailure(
                  new Error('A transaction was started, or a top-level store written, inside a running transaction; use the stores it passes to its work.'),
                ),
              ),
            )
          : submit(work, options?.rerunnable === true),
  };
};
