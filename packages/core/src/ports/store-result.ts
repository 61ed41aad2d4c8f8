import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../errors.js';

/** What every store call returns: a value, or a StoreError (never a thrown exception). */
export type StoreResult<A> = TaskEither<StoreError, A>;

/** A keyset position: the (createdAt, id) of the last row already seen. */
export interface KeysetPosition {
  readonly createdAt: string;
  readonly id: string;
}

/** One page request as the stores see it; the cursor has already been verified and decoded. */
export interface KeysetQuery<F = undefined> {
  readonly limit: number;
  readonly order: 'asc' | 'desc';
  readonly after: KeysetPosition | null;
  readonly filter: F;
}

/**
 * A page as a store returns it: `items` holds at most `limit` rows ordered by (createdAt, id) in the
 * requested order, strictly after `after`; `hasMore` tells whether a further row exists.
 */
export interface KeysetPage<A> {
  readonly items: readonly A[];
  readonly hasMore: boolean;
}
