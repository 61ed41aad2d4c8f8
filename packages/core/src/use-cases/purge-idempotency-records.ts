import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { PurgedBatch } from '../ports/idempotency-store.js';
import type { Stores } from '../ports/stores.js';

/**
 * Records deleted per batch: enough that a day of writes goes in a few thousand statements, few enough that
 * one statement holds the database's writer for milliseconds, not seconds.
 */
export const IDEMPOTENCY_PURGE_BATCH = 1_000;

/**
 * How long past its expiry a record is left before it is deleted. The process that purges and the one that
 * answers a retry read different clocks; an hour absorbs any skew between them, so no record is deleted while
 * a process that still counts it as live could replay it.
 */
export const IDEMPOTENCY_PURGE_GRACE_MS: number = 60 * 60_000;

/**
 * Deletes one batch of idempotency records past their expiry (`IDEMPOTENCY_TTL_MS` after their first use)
 * by `IDEMPOTENCY_PURGE_GRACE_MS`, in every tenant; answers how many. An expired record is already as good
 * as absent (a new call with its key proceeds), so this only gives back the space: without it the table
 * grows with every write ever made.
 * A caller runs it again while it answers a full batch, letting other work through between batches; each
 * batch of such a run starts at the expiry where the last one ended. A batch that is not full (or fails) ends
 * the run, and the next run starts from the earliest record again, so a record passed over (taken over while
 * its batch ran) is not left behind for good. One function serves one caller at a time: made per purger.
 *
 * @example
 * const purge = purgeExpiredIdempotencyRecords(deps);
 * for (let n = IDEMPOTENCY_PURGE_BATCH; n === IDEMPOTENCY_PURGE_BATCH; ) {
 *   const r = await purge()();
 *   n = E.isRight(r) ? r.right : 0;
 * }
 */
export const purgeExpiredIdempotencyRecords = (deps: { readonly stores: Stores; readonly clock: Clock }): ((batch?: number) => TE.TaskEither<StoreError, number>) => {
  // Where the run under way has got to: the expiry of the last record its last full batch deleted.
  let from: string | null = null;
  return (batch: number = IDEMPOTENCY_PURGE_BATCH): TE.TaskEither<StoreError, number> =>
    // The time is read when the batch runs, not when it is built.
    async () => {
      const cutoff = new Date(deps.clock.now().getTime() - IDEMPOTENCY_PURGE_GRACE_MS).toISOString();
      const r = await deps.stores.idempotency.purgeExpired(cutoff, batch, from)();
      from = E.isRight(r) && r.right.deleted === batch ? r.right.through : null;
      return E.map((b: PurgedBatch) => b.deleted)(r);
    };
};
