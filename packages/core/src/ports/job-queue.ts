import type { Job, JobKind } from '../model/job.js';
import type { StoreResult } from './store-result.js';

export interface NewJob {
  readonly id: string;
  readonly kind: JobKind;
  readonly orgId: string;
  readonly mode: Job['mode'];
  readonly payload: Readonly<Record<string, string>>;
  readonly runAt: string;
  readonly dedupeKey: string | null;
  readonly createdAt: string;
}

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
   * another worker claims the job). `false` means the lease was lost (another worker has the job now, or it
   * is gone): the caller's transaction must then not commit its effects.
   */
  complete(id: string, worker: string): StoreResult<boolean>;
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
}
