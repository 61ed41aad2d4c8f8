import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { Clock, Job, JobHandler, JobKind, Stores, UnitOfWork } from '@esig/core';
import { concurrentModification } from '@esig/core';

export interface WorkerLogger {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export interface WorkerOptions {
  /** Unique per worker (process id and a random part); it is what holds leases. */
  readonly id: string;
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly handlers: Partial<Record<JobKind, JobHandler>>;
  /** Longest sleep when idle; a wake() or a due job ends it sooner. */
  readonly pollMs?: number;
  /** How long a claimed job stays ours; a worker that dies releases its jobs when this runs out. */
  readonly leaseMs?: number;
  readonly batch?: number;
  /**
   * Job loops run side by side in this worker. Most jobs wait on the network (SMTP, webhook receivers), so
   * several loops overlap those waits; each loop claims its own jobs, so no job runs twice at once.
   */
  readonly concurrency?: number;
  /** After this many attempts a failing job is buried (kept, marked dead, never claimed again). */
  readonly maxAttempts?: number;
  /** Delay before attempt `attempts + 1`. */
  readonly retryDelayMs?: (attempts: number) => number;
  readonly logger?: WorkerLogger;
}

export interface RunningWorker {
  /** Ends the sleep now (new work was committed). */
  wake(): void;
  /** Stops claiming; resolves when the job in hand is finished or released. */
  stop(): Promise<void>;
}

/** 5 s, 10 s, 20 s … capped at an hour: a mail server that is down for a while is retried patiently. */
export const defaultRetryDelayMs = (attempts: number) => Math.min(5_000 * 2 ** Math.max(0, attempts - 1), 3_600_000);

const silent: WorkerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * A job worker loop. Each job's handler does its outside work, then its recorded outcome commits in the
 * same transaction as the job's completion (which checks the lease is still ours), so a job's effects are
 * recorded exactly once even when workers crash or race.
 */
export const startWorker = (o: WorkerOptions): RunningWorker => {
  const kinds = Object.keys(o.handlers) as JobKind[];
  const pollMs = o.pollMs ?? 1000;
  const leaseMs = o.leaseMs ?? 5 * 60_000;
  const batch = o.batch ?? 10;
  const maxAttempts = o.maxAttempts ?? 12;
  const delay = o.retryDelayMs ?? defaultRetryDelayMs;
  const log = o.logger ?? silent;
  let running = true;
  const sleepers = new Set<() => void>();
  const wakeAll = () => {
    for (const wake of [...sleepers]) wake();
  };

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => done(), ms);
      const done = () => {
        clearTimeout(t);
        sleepers.delete(done);
        resolve();
      };
      sleepers.add(done);
    });

  const runJob = async (job: Job) => {
    const handler = o.handlers[job.kind]!;
    const outcome = await pipe(
      handler(job),
      TE.chainW((command) =>
        o.uow.transaction((tx) =>
          pipe(
            command(tx),
            TE.chainW(() => tx.jobs.complete(job.id, o.id)),
            // Our lease ran out and another worker owns the job now: record nothing, let it finish.
            TE.chainW((held) => (held ? TE.right(undefined) : TE.left(concurrentModification('job', job.id)))),
          ),
        ),
      ),
    )();
    if (E.isRight(outcome)) return log.info({ job: job.id, kind: job.kind, attempts: job.attempts }, 'job done');
    const e = outcome.left;
    const detail = e._tag === 'JobFailure' ? e.detail : e._tag === 'StoreFailure' ? String((e.cause as Error)?.message ?? e.cause) : e._tag;
    if (e._tag === 'ConcurrentModification' && e.resource === 'job') return log.warn({ job: job.id }, 'job lease lost; another worker has it');
    const transient = e._tag === 'StoreFailure' || e._tag === 'ConcurrentModification' || (e._tag === 'JobFailure' && !e.permanent);
    const now = o.clock.now().getTime();
    const settle =
      transient && job.attempts < maxAttempts
        ? o.stores.jobs.retry(job.id, o.id, new Date(now + delay(job.attempts)).toISOString(), detail)
        : o.stores.jobs.bury(job.id, o.id, detail);
    const settled = await settle();
    log[transient ? 'warn' : 'error']({ job: job.id, kind: job.kind, attempts: job.attempts, error: detail, buried: !(transient && job.attempts < maxAttempts), settled: E.isRight(settled) }, 'job failed');
  };

  const loop = async () => {
    while (running) {
      const now = o.clock.now();
      const claimed = await o.stores.jobs.claim(kinds, o.id, now.toISOString(), new Date(now.getTime() + leaseMs).toISOString(), batch)();
      if (E.isLeft(claimed)) {
        log.error({ error: claimed.left._tag }, 'claiming jobs failed');
        await sleep(pollMs);
        continue;
      }
      for (const job of claimed.right) {
        // Finish the job in hand even when asked to stop; the rest were only leased and are released.
        if (!running) {
          await o.stores.jobs.retry(job.id, o.id, job.runAt, 'worker stopped before starting it')();
          continue;
        }
        await runJob(job);
      }
      if (claimed.right.length === batch) continue;
      const next = await o.stores.jobs.nextRunAt(kinds)();
      const untilNext = E.isRight(next) && next.right !== null ? new Date(next.right).getTime() - o.clock.now().getTime() : pollMs;
      if (running) await sleep(Math.max(10, Math.min(pollMs, untilNext)));
    }
  };

  const loops = Array.from({ length: Math.max(1, o.concurrency ?? 1) }, () => loop().catch((e: unknown) => log.error({ err: String(e) }, 'worker loop crashed')));
  const finished = Promise.all(loops);
  return {
    wake: wakeAll,
    stop: async () => {
      running = false;
      wakeAll();
      await finished;
    },
  };
};
