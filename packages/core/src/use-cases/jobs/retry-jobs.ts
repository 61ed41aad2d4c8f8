import * as A from 'fp-ts/lib/Array.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { QueuedJob } from '../../model/job.js';
import { jobState } from '../../model/job.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';
import { MAX_JOB_LIST } from './list-jobs.js';

/** What an operator's retry did to one job. */
export type JobRetry =
  /** Due now with its attempts reset; a worker picks it up at its next poll. */
  | { readonly id: string; readonly outcome: 'revived'; readonly job: QueuedJob }
  /** No such job: it finished (done jobs are removed) or never existed. */
  | { readonly id: string; readonly outcome: 'unknown' }
  /** A worker is running it now; it is left alone to finish. */
  | { readonly id: string; readonly outcome: 'running'; readonly job: QueuedJob }
  /** It never failed (it waits for its time, e.g. an expiry): running it early would be wrong. */
  | { readonly id: string; readonly outcome: 'not-failed'; readonly job: QueuedJob };

/** Which jobs to retry: these, and/or every failed job of a request. */
export interface RetryTarget {
  readonly jobIds: readonly string[];
  readonly requestId: string | null;
}

const reviveOne =
  (deps: { readonly stores: Stores }, now: string) =>
  (job: QueuedJob): TE.TaskEither<DomainError, JobRetry> => {
    if (job.lastError === null) return TE.right({ id: job.id, outcome: 'not-failed', job });
    if (jobState(job, now) === 'running') return TE.right({ id: job.id, outcome: 'running', job });
    return pipe(
      deps.stores.jobs.revive(job.id, now),
      // Refused only if a worker claimed it between the look and the revival: it is running now.
      TE.map((revived): JobRetry => (revived ? { id: job.id, outcome: 'revived', job: { ...job, attempts: 0, runAt: now, buried: false, lease: null } } : { id: job.id, outcome: 'running', job })),
    );
  };

/**
 * An operator's retry after fixing what made jobs fail (`esig jobs retry`): each failed job named, and every
 * failed job of `requestId`, becomes due now with its attempts reset, buried or backing off alike, so a seal
 * that gave up can still finish the request. A job that is running, or that never failed, is left as it is
 * and reported so; one that does not exist is reported unknown. Across every tenant, not over HTTP.
 */
export const retryJobs =
  (deps: { readonly stores: Stores; readonly clock: Clock }) =>
  (target: RetryTarget): TE.TaskEither<DomainError, readonly JobRetry[]> => {
    const now = deps.clock.now().toISOString();
    const ids = [...new Set(target.jobIds)];
    return pipe(
      TE.Do,
      TE.bind('named', () => (ids.length === 0 ? TE.right([] as readonly QueuedJob[]) : deps.stores.jobs.list({ ids, limit: ids.length }))),
      TE.bind('ofRequest', () =>
        target.requestId === null ? TE.right([] as readonly QueuedJob[]) : deps.stores.jobs.list({ requestId: target.requestId, failedOnly: true, limit: MAX_JOB_LIST }),
      ),
      TE.chain(({ named, ofRequest }) => {
        const found = new Map([...named, ...ofRequest].map((j) => [j.id, j]));
        const unknown = ids.filter((id) => !found.has(id)).map((id): JobRetry => ({ id, outcome: 'unknown' }));
        return pipe(
          [...found.values()],
          A.traverse(TE.ApplicativeSeq)(reviveOne(deps, now)),
          TE.map((done): readonly JobRetry[] => [...done, ...unknown]),
        );
      }),
    );
  };
