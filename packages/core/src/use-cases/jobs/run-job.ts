import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type * as T from 'fp-ts/lib/Task.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Job } from '../../model/job.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';
import type { TransactionOptions, UnitOfWork } from '../../ports/unit-of-work.js';
import type { JobFailure, JobHandler, JobHandlers } from './job-handler.js';
import { releaseOf } from './job-handler.js';

/** 5 s, 10 s, 20 s … capped at an hour: a mail server that is down for a while is retried patiently. */
export const defaultRetryDelayMs = (attempts: number): number => Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

/** How the run of one claimed job ended. */
export type JobRunOutcome =
  | { readonly _tag: 'Done' }
  /** Another worker holds the job now (this one's lease ran out): nothing of this run was recorded. */
  | { readonly _tag: 'LeaseLost' }
  /** Failed for a reason worth another attempt, scheduled at `nextRunAt`. */
  | { readonly _tag: 'Retrying'; readonly error: string; readonly nextRunAt: string; readonly settled: boolean }
  /** Failed for good, or too often: kept, marked dead, never claimed again (`esig jobs retry` revives it). */
  | { readonly _tag: 'Buried'; readonly error: string; readonly permanent: boolean; readonly settled: boolean };

export interface RunJobDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly handlers: JobHandlers;
  /** After this many attempts a failing job is buried. Default 12. */
  readonly maxAttempts?: number;
  /** Delay before attempt `attempts + 1`. Default `defaultRetryDelayMs`. */
  readonly retryDelayMs?: (attempts: number) => number;
}

const describe = (e: DomainError | JobFailure): string =>
  e._tag === 'JobFailure'
    ? e.detail
    : e._tag === 'StoreFailure'
      ? String((e.cause as Error | undefined)?.message ?? e.cause)
      : e._tag === 'ConcurrentModification'
        ? `ConcurrentModification (${e.resource})`
        : e._tag;

/**
 * What a job's handler left after its outside work: the change to record with the job's completion, or why
 * it failed. Not recorded yet; `settleClaimedJob` does that.
 */
export type PerformedJob = E.Either<DomainError | JobFailure, (tx: Stores) => TE.TaskEither<DomainError, void>>;

/** The first half of running a claimed job: the handler's outside work (mail, POST, rendering), outside any transaction. */
export const performClaimedJob =
  (deps: RunJobDeps) =>
  (job: Job): T.Task<PerformedJob> =>
  async () => {
    // The map gives each kind its own handler; TypeScript cannot follow the kind from key to parameter.
    const handler = deps.handlers[job.kind] as JobHandler | undefined;
    if (handler === undefined) return E.left({ _tag: 'JobFailure', permanent: true, detail: `no handler for ${job.kind}` });
    // A handler should answer Left, but one that throws or rejects (a bug, a library that throws) is a failure
    // of this run, retried with backoff and buried in the end like any other: it must not take a worker down.
    // Called inside `then`, so a synchronous throw becomes a rejection too.
    const ran = await TE.tryCatch(
      () => Promise.resolve().then(() => handler(job)()),
      (e): JobFailure => ({ _tag: 'JobFailure', permanent: false, detail: `the ${job.kind} handler threw: ${e instanceof Error ? e.message : String(e)}` }),
    )();
    return E.flattenW(ran);
  };

/**
 * In `tx`: the handler's change, then the job's completion, which checks that `worker` still holds the lease.
 * Our lease ran out and another worker owns the job now: record nothing (Left), let it finish.
 */
const recordAndComplete = (tx: Stores, job: Job, worker: string, record: (tx: Stores) => TE.TaskEither<DomainError, void>) =>
  pipe(
    record(tx),
    TE.chainW(() => tx.jobs.complete(job.id, worker)),
  );

/**
 * How a job's outcome is recorded: a record, like a command, stops at its first failed write (a Left ends its
 * chain), and so does the completion after it, so the store need not wait for each write's answer (on
 * PostgreSQL the writes and the `COMMIT` then leave together). A record must not carry on past a failed write.
 * Like a command, it acts only through the transaction's stores, so the store may run it again (SQLite's
 * group commit then needs no savepoint for it); `settleClaimedJobs` relies on the same on PostgreSQL.
 */
const RECORD: TransactionOptions = { deferWrites: true, rerunnable: true };

/**
 * What the handler set aside for its record (staged content) is freed once the record has run, committed or not
 * (a record that committed without using it, the work being done already, leaves it to nobody too), whichever
 * way it was recorded: alone or in a group. Best effort, not awaited.
 */
const releaseAfter = (record: (tx: Stores) => TE.TaskEither<DomainError, void>): void => {
  const r = releaseOf(record);
  if (r !== undefined) void r().catch(() => undefined);
};

/**
 * The second half: records what `performClaimedJob` did — the handler's change and the job's completion in
 * one transaction, which checks that `worker` still holds the lease — or schedules a retry, or buries the job.
 * `lost` is asked first: a worker that knows it lost the lease meanwhile (its heartbeat said so) records
 * nothing. The transaction is started before the task's first await, so settles started in one synchronous
 * run reach a serial store's writer together and share its COMMIT (the worker groups them so).
 */
export const settleClaimedJob =
  (deps: RunJobDeps) =>
  (job: Job, worker: string, done: PerformedJob, lost: () => boolean = () => false): T.Task<JobRunOutcome> =>
  async () => {
    const release = () => {
      if (E.isRight(done)) releaseAfter(done.right);
    };
    if (lost()) {
      release();
      return { _tag: 'LeaseLost' };
    }
    const outcome = E.isLeft(done) ? done : await deps.uow.transaction((tx) => recordAndComplete(tx, job, worker, done.right), RECORD)();
    release();
    if (E.isRight(outcome)) return { _tag: 'Done' };
    const e = outcome.left;
    if (e._tag === 'ConcurrentModification' && e.resource === 'job') return { _tag: 'LeaseLost' };
    const error = describe(e);
    const transient = e._tag === 'StoreFailure' || e._tag === 'ConcurrentModification' || (e._tag === 'JobFailure' && !e.permanent);
    if (transient && job.attempts < (deps.maxAttempts ?? 12)) {
      const nextRunAt = new Date(deps.clock.now().getTime() + (deps.retryDelayMs ?? defaultRetryDelayMs)(job.attempts)).toISOString();
      const settled = await deps.stores.jobs.retry(job.id, worker, nextRunAt, error)();
      return { _tag: 'Retrying', error, nextRunAt, settled: E.isRight(settled) };
    }
    const settled = await deps.stores.jobs.bury(job.id, worker, error)();
    return { _tag: 'Buried', error, permanent: !transient, settled: E.isRight(settled) };
  };

/**
 * Runs one job that `worker` has claimed: the handler does its outside work, then its recorded outcome
 * commits in the same transaction as the job's completion, which checks that `worker` still holds the
 * lease — so the outcome is recorded exactly once even when workers crash or race. A failure is retried
 * later (with backoff) or buried. `lost` is asked after the handler ran: a worker that knows it lost the
 * lease meanwhile (its heartbeat said so) records nothing.
 */
export const runClaimedJob =
  (deps: RunJobDeps) =>
  (job: Job, worker: string, lost: () => boolean = () => false): T.Task<JobRunOutcome> =>
  async () =>
    settleClaimedJob(deps)(job, worker, await performClaimedJob(deps)(job)(), lost)();

/** A claimed job whose outside work is done, waiting to be recorded: see `settleClaimedJob`. */
export interface ClaimedJobToSettle {
  readonly job: Job;
  readonly done: PerformedJob;
  readonly lost?: () => boolean;
}

/**
 * At most this many records to one transaction. A group's members run one after another on one connection,
 * and their loops wait for the last: groups of 16 saved CPU but delivered more slowly than no groups at all;
 * groups of 4 saved about as much CPU and delivered faster (docs/performance.md, webhooks).
 */
export const MAX_SETTLE_GROUP = 4;

/**
 * How long a group's statement waits for a row lock before the group gives up and its members run alone.
 * A group holds the locks its members take until its last member has run, so two groups that lock the same
 * rows in opposite orders (two failing webhook endpoints, two requests) deadlock; alone, each member holds
 * its locks only for itself. A group's usual wait is another group's few milliseconds.
 */
export const SETTLE_GROUP_LOCK_TIMEOUT_MS = 100;

/**
 * Settles several claimed jobs of `worker` at once, with the same outcome for each as `settleClaimedJob`.
 * Every settle starts before this returns: on a serial store they reach its writer together and share one
 * commit. Each job's answer is its own promise, settled as soon as its own outcome is known; one that
 * rejects (a bug) leaves the others' alone.
 *
 * Where transactions run side by side (PostgreSQL), the jobs whose outside work succeeded are recorded in
 * groups of up to `MAX_SETTLE_GROUP`, each group in one transaction: each job's change and its completion,
 * one after another, between one `BEGIN` and one `COMMIT` where each would have had its own. Should any member
 * answer Left (its lease lost, a concurrent change), a statement wait longer than
 * `SETTLE_GROUP_LOCK_TIMEOUT_MS` for a lock, or the transaction fail, nothing of the group remains and each
 * of its members settles alone, as if it had never been grouped: a record is a function of the transaction
 * it runs in, so running it again gives what it would have given the first time. There are no savepoints,
 * which would cost the statements the group saves; a group that fails is the rare case.
 *
 * Where transactions run one at a time (SQLite), the store already gives the settles started together one
 * commit (and undoes and runs again a group whose record failed after writing), so each settles alone there.
 */
export const settleClaimedJobs =
  (deps: RunJobDeps) =>
  (worker: string, jobs: ReadonlyArray<ClaimedJobToSettle>): ReadonlyArray<Promise<JobRunOutcome>> => {
    // `settleClaimedJob`'s task is async: whatever it calls that throws becomes its own rejection.
    const alone = (j: ClaimedJobToSettle): Promise<JobRunOutcome> => settleClaimedJob(deps)(j.job, worker, j.done, j.lost)();
    if (deps.uow.serial === true || jobs.length < 2) return jobs.map(alone);

    type Member = { readonly j: ClaimedJobToSettle; readonly record: (tx: Stores) => TE.TaskEither<DomainError, void>; readonly answer: number };
    const recordGroup = (group: ReadonlyArray<Member>): Promise<E.Either<unknown, unknown>> =>
      deps.uow.transaction(
        (tx) =>
          pipe(
            group,
            TE.traverseSeqArray(({ j, record }) => recordAndComplete(tx, j.job, worker, record)),
          ),
        { ...RECORD, lockTimeoutMs: SETTLE_GROUP_LOCK_TIMEOUT_MS },
      )();
    const outcomes: Array<Promise<JobRunOutcome>> = [];
    let group: Member[] = [];
    const flush = () => {
      const members = group;
      group = [];
      if (members.length === 0) return;
      if (members.length === 1) {
        outcomes[members[0]!.answer] = alone(members[0]!.j);
        return;
      }
      const started = E.tryCatch(
        () => recordGroup(members),
        (e) => e,
      );
      const recorded = E.isRight(started) ? started.right : Promise.reject(started.left);
      // A group that failed in any way, even by throwing, leaves nothing behind: each member then runs alone.
      for (const m of members)
        outcomes[m.answer] = recorded.then(
          // Recorded in the group: released here, as settling alone would have (a member run alone releases there).
          (r) => (E.isRight(r) ? (releaseAfter(m.record), { _tag: 'Done' as const }) : alone(m.j)),
          () => alone(m.j),
        );
    };
    jobs.forEach((j, i) => {
      // A failed handler, or a lease known lost, takes the path of its own (a retry, a burial, nothing).
      if (E.isLeft(j.done)) {
        outcomes[i] = alone(j);
        return;
      }
      const lost = E.tryCatch(
        () => j.lost?.() ?? false,
        (e) => e,
      );
      if (E.isLeft(lost)) outcomes[i] = Promise.reject(lost.left);
      else if (lost.right) outcomes[i] = alone(j);
      else {
        group.push({ j, record: j.done.right, answer: i });
        if (group.length === MAX_SETTLE_GROUP) flush();
      }
    });
    flush();
    return outcomes;
  };
