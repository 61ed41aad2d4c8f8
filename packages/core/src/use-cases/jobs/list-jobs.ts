import type { JobFilter, QueuedJob } from '../../model/job.js';
import type { StoreResult } from '../../ports/store-result.js';
import type { Stores } from '../../ports/stores.js';

/** The most jobs one listing returns. */
export const MAX_JOB_LIST = 1000;

/**
 * An operator's view of the job queue (`esig jobs list`): what is queued, running, backing off or buried,
 * with attempts and the last error, so a job that keeps failing (a seal that never produces the finished
 * PDF) is seen instead of sitting silently. Across every tenant and not exposed over HTTP: it serves
 * whoever may open the database. The limit is clamped to 1..MAX_JOB_LIST.
 */
export const listJobs =
  (deps: { readonly stores: Stores }) =>
  (filter: JobFilter): StoreResult<readonly QueuedJob[]> =>
    deps.stores.jobs.list({ ...filter, limit: Math.min(MAX_JOB_LIST, Math.max(1, Math.floor(filter.limit))) });
