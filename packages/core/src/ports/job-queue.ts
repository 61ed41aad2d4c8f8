import type { Job, JobFilter, JobKind, JobNotes, JobWork, QueuedJob } from '../model/job.js';
import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/** A job to enqueue: its kind with that kind's payload, and when it may run. */
export type NewJob = JobWork & {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Job['mode'];
  readonly runAt: string;
  readonly dedupeKey: string | null;
  readonly createdAt: string;
};

/**
 * The durable job queue. Jobs are enqueued inside the transaction of the change that needs them; workers
 * claim due jobs with a lease. Several workers may claim at once: a job is handed to one claimer at a time,
 * and a job whose lease expired (its worker died) is handed out again. Jobs are not tenant-scoped: workers
 * serve every tenant and read the tenant from the job.
 */
export interface JobQueue {
  /**
   * Adds a job (attempts 0, no last error); `false` (and nothing written) when a job with the same
   * dedupeKey already exists, buried ones included. A completed job no longer exists. Null keys never collide.
   */
  enqueue(job: NewJob): StoreResult<boolean>;
  /**
   * Leases up to `limit` jobs of these kinds whose `runAt` is at or before `now` and that are not leased
   * (or whose lease ended, at or before `now`), never buried ones, oldest `runAt` first (ties
   * by id); sets their lease to (`worker`, `leaseUntil`), increments their `attempts` and returns them so.
   * Atomic at top level and inside a transaction alike: concurrent claimers never get the same job while
   * its lease runs.
   */
  claim(kinds: readonly JobKind[], worker: string, now: string, leaseUntil: string, limit: number): StoreResult<readonly Job[]>;
  /**
   * Removes a finished job, only if `worker` still holds its lease (a lease that ran out still counts until
   * another worker claims the job). Otherwise it fails with ConcurrentModification (resource `job`, the job's
   * id): the lease was lost (another worker has the job now, or it is gone), and the caller's transaction must
   * not commit its effects. Only a lost lease names `job`: the worker then gives the job up, so any other
   * failure (a lock on the row not had in time) must name something else, and the job is retried. A failure
   * like any other write's, so a transaction run with `deferWrites` may hear of it only at its end (see
   * `TransactionOptions`).
   */
  complete(id: string, worker: string): StoreResult<void>;
  /**
   * Sets the end of the lease `worker` holds on a job to `leaseUntil`: the heartbeat of a worker whose
   * handler is still running, so a slow job is not handed to a second worker (or, with `leaseUntil` now, a
   * stopping worker giving back a job it has not started, which is otherwise left as it was). Like `complete`, a lease that ran out
   * still counts until another worker claims the job. `false` (and nothing written) means `worker` no
   * longer holds the job (another worker claimed it, it was revived, or it is gone): the lease is lost, and
   * the caller must not record the job's outcome.
   */
  extendLease(id: string, worker: string, leaseUntil: string): StoreResult<boolean>;
  /**
   * Merges `notes` into the job's notes (a note replaces the same note), so later runs of the job see what
   * this one already did outside (its mail was accepted). Not tied to the lease: a note states a fact about
   * the outside world, true whoever holds the job now. Buried jobs take notes too (a revived job must know).
   * `false` when no such job exists (it was completed).
   */
  annotate(id: string, notes: JobNotes): StoreResult<boolean>;
  /**
   * Releases the lease and reschedules the job at `runAt`, recording why it failed. Only the lease holder
   * can: for another `worker` it changes nothing.
   */
  retry(id: string, worker: string, runAt: string, error: string): StoreResult<void>;
  /**
   * Gives up: the job stays, marked dead with its last error, and is never claimed again (its dedupeKey
   * stays taken). Only the lease holder can: for another `worker` it changes nothing.
   */
  bury(id: string, worker: string, error: string): StoreResult<void>;
  /**
   * The soonest time a job of these kinds can be claimed, to sleep until then (null when none): its
   * `runAt`, or for a leased job the end of its lease if later. Buried jobs do not count.
   */
  nextRunAt(kinds: readonly JobKind[]): StoreResult<string | null>;
  /**
   * The jobs matching `filter`, buried ones included, soonest `runAt` first (ties by id), at most
   * `filter.limit`; each with its burial and lease, for an operator to see what is stuck and why.
   */
  list(filter: JobFilter): StoreResult<readonly QueuedJob[]>;
  /**
   * An operator's retry after fixing a cause: a job that failed (it has a last error: backing off or
   * buried) becomes due at `now`, unburied, with its attempts reset to 0 and its lease cleared; its last
   * error and payload stay. `false` (and nothing written) when there is no such job: unknown, never failed,
   * or running now (a worker's lease ends after `now`), which must be left to finish.
   */
  revive(id: string, now: string): StoreResult<boolean>;
  /**
   * Deletes the jobs of `tenant` whose dedupeKey is `match.key`, or starts with `match.prefix`, that wait to run
   * and that no worker has touched since: never claimed, or rescheduled by `retry`. For a change that makes
   * scheduled work pointless: a request that ends takes its expiry and its next automatic reminder with it.
   * A job a worker holds is left alone: it runs, finds nothing to do and completes (deleting it would fail its
   * completion, and with it the transaction it records in, which may be the very change that called this). So
   * is a buried one, for an operator to see, and one whose lease ran out or that a stopping worker handed back
   * (both still name their worker). A prefix is printable ASCII, at least one character; any other fails with
   * StoreFailure and deletes nothing. A write like any other: in a transaction run with `deferWrites` it may go
   * out unanswered.
   */
  cancelWaiting(tenant: Tenant, match: DedupeKeyMatch): StoreResult<void>;
}

/** Which dedupe keys `JobQueue.cancelWaiting` deletes: one key, or every key that starts with a prefix. */
export type DedupeKeyMatch = { readonly key: string } | { readonly prefix: string };
