import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../errors.js';
import type { Stores } from './stores.js';

/** How a transaction is to run, beyond the defaults. */
export interface TransactionOptions {
  /**
   * The longest any one statement of the transaction waits for a lock another transaction holds. Past it the
   * statement fails, and with it the transaction (a StoreError). For work that has a better way to go than
   * waiting: a group of writes that can run again one by one. Unset, a statement waits as long as the store
   * lets any wait (its own lock timeout, its deadlock detection). A store whose transactions run one at a
   * time (`serial`) never waits for a lock inside one, and may ignore it.
   */
  readonly lockTimeoutMs?: number;
  /**
   * Promises that `work` stops at the first store write that fails: it never recovers from a write's error
   * and carries on (nothing of esig's commands does). The store may then report a write's failure later than
   * the write itself: at the transaction's next statement, or as the whole transaction's failure, with the
   * write's own error, instead of waiting for each write's answer before the next statement goes out. Nothing
   * is committed either way. On PostgreSQL this saves a round trip per write; a store whose writes answer at
   * once (SQLite) ignores it. Leave it unset for work that tolerates a write's failure (an insert whose
   * ConcurrentModification it treats as "already there", say): there every write answers before work goes on.
   */
  readonly deferWrites?: boolean;
  /**
   * Promises that `work` may be run again from the start, on fresh stores, before its transaction commits:
   * its only effects are the writes it makes through those stores (no mail sent, no file written, no state
   * kept outside), so a run the store undid leaves no trace. Nobody hears of an undone run: the caller gets
   * the result of the run that committed, or of the last one. A store that runs several transactions in one
   * (SQLite's group commit) may then run such work without a savepoint of its own, and when it fails after
   * writing, undo the group and run it again with one. Unset, `work` runs exactly once.
   */
  readonly rerunnable?: boolean;
}

/**
 * Runs work atomically. `work` receives stores bound to one transaction: everything it writes commits
 * together when it returns Right, and nothing of it remains when it returns Left or fails. Transactions
 * are isolated from each other at least as strongly as "read committed plus the row locks the stores
 * take"; a store signals a lost race with ConcurrentModification rather than by blocking forever.
 */
export interface UnitOfWork {
  transaction<E, A>(work: (tx: Stores) => TaskEither<E, A>, options?: TransactionOptions): TaskEither<E | StoreError, A>;
  /**
   * True when transactions run one at a time (a single writer, as SQLite's): no other transaction starts
   * while one runs, so nothing another caller does can observe or interleave with its intermediate state.
   * Use cases may then do in one transaction what would otherwise take two (an idempotency claim and the
   * command it guards). Absent means false: transactions may run side by side.
   */
  readonly serial?: boolean;
}
