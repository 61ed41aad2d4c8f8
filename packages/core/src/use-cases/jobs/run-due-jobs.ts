import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { DomainError } from '../../errors.js';
import type { JobKind } from '../../model/job.js';
import type { JobRunOutcome, RunJobDeps } from './run-job.js';
import { runClaimedJob } from './run-job.js';

export interface DueJobsRun {
  /** How many jobs ended each way. */
  readonly done: number;
  readonly retrying: number;
  readonly buried: number;
  readonly leaseLost: number;
  /** Every job run, with its kind and how it ended, in order. */
  readonly runs: ReadonlyArray<{ readonly id: string; readonly kind: JobKind; readonly outcome: JobRunOutcome }>;
}

export interface RunDueJobsOptions {
  /** Holds the leases while the jobs run; unique among workers running at the same time. Default `run-due-jobs`. */
  readonly worker?: string;
  /** Stop after this many jobs. Default 1,000: a loop of jobs that keep creating due jobs still ends. */
  readonly limit?: number;
  /** How long a claimed job stays this run's. Default 5 minutes. */
  readonly leaseMs?: number;
}

/**
 * Runs every job that is due now, one after another, until none is left (jobs the runs create that are due
 * at once run too): the invitations after `send`, the seal after the last signature, the completed notices,
 * webhook deliveries. For tests, serverless functions and cron, beside or instead of the long-running
 * worker (`startWorker` in @esig/runtime-node); both claim with leases, so they never run a job twice.
 *
 * @example
 * // After the last signature, seal the request and mail the completed notices, then read the finished PDF:
 * const run = await runDueJobs({ ...deps, handlers: jobHandlers(deps) })()();
 * if (E.isRight(run)) console.log(`${run.right.done} jobs done, ${run.right.retrying} to retry later`);
 */
export const runDueJobs =
  (deps: RunJobDeps) =>
  (options: RunDueJobsOptions = {}): TE.TaskEither<DomainError, DueJobsRun> =>
  async () => {
    const worker = options.worker ?? 'run-due-jobs';
    const leaseMs = options.leaseMs ?? 5 * 60_000;
    const kinds = Object.keys(deps.handlers) as JobKind[];
    const run = runClaimedJob(deps);
    const runs: Array<DueJobsRun['runs'][number]> = [];
    while (runs.length < (options.limit ?? 1_000)) {
      const now = deps.clock.now();
      const claimed = await deps.stores.jobs.claim(kinds, worker, now.toISOString(), new Date(now.getTime() + leaseMs).toISOString(), 1)();
      if (E.isLeft(claimed)) return claimed;
      const [job] = claimed.right;
      if (job === undefined) break;
      runs.push({ id: job.id, kind: job.kind, outcome: await run(job, worker)() });
    }
    const count = (tag: JobRunOutcome['_tag']) => runs.filter((r) => r.outcome._tag === tag).length;
    return E.right({ done: count('Done'), retrying: count('Retrying'), buried: count('Buried'), leaseLost: count('LeaseLost'), runs });
  };
