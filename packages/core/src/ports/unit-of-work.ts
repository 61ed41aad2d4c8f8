import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../errors.js';
import type { Stores } from './stores.js';

/**
 * Runs work atomically. `work` receives stores bound to one transaction: everything it writes commits
 * together when it returns Right, and nothing of it remains when it returns Left or fails. Transactions
 * are isolated from each other at least as strongly as "read committed plus the row locks the stores
 * take"; a store signals a lost race with ConcurrentModification rather than by blocking forever.
 */
export interface UnitOfWork {
  transaction<E, A>(work: (tx: Stores) => TaskEither<E, A>): TaskEither<E | StoreError, A>;
  /**
   * True when transactions run one at a time (a single writer, as SQLite's): no other transaction starts
   * while one runs, so nothing another caller does can observe or interleave with its intermediate state.
   * Use cases may then do in one transaction what would otherwise take two (an idempotency claim and the
   * command it guards). Absent means false: transactions may run side by side.
   */
  readonly serial?: boolean;
}
