import * as E from 'fp-ts/lib/Either.js';
import type { Clock, Job, JobHandlers, JobKind, Stores, UnitOfWork } from '@esig/core';
import { requestIdOf, runClaimedJob } from '@esig/core';

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
  readonly handlers: JobHandlers;
  /** Longest sleep when idle; a wake() or a due job ends it sooner. */
  readonly pollMs?: number;
  /**
   * How long a claimed job stays ours without a renewal. While a job is in hand (running, or claimed and
   * waiting its turn in this worker) its lease is renewed every `heartbeatMs`; a worker that dies stops
   * renewing, and its jobs are taken over when this runs out.
   */
  readonly leaseMs?: number;
  /** How often the leases of the jobs in hand are renewed; default a third of `leaseMs`, so one late or failed renewal does not lose them. */
  readonly heartbeatMs?: number;
  /**
   * Jobs one loop claims at once; default 1. A loop runs its batch one job after another, so the rest wait
   * in this worker's hand — renewed by every heartbeat, out of reach of idle workers — instead of in the
   * queue: larger batches save claim statements at the price of slower heartbeats and less sharing.
   */
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


const silent: WorkerLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** What the logs say about a job: enough to find it (`esig jobs list`) and the request it is about. */
const jobFields = (job: Job) => ({
  job: job.id,
  kind: job.kind,
  org: job.orgId,
  mode: job.mode,
  request: requestIdOf(job),
  payload: job.payload,
  attempts: job.attempts,
});

/** A job this worker holds: claimed and not yet settled. */
interface InHand {
  /** A renewal found another holder: the job is no longer ours, and its outcome must not be recorded here. */
  lost: boolean;
  /** Its outcome is being committed (the commit checks the lease itself): a renewal's answer no longer matters. */
  settling: boolean;
}

/**
 * A job worker loop around `runClaimedJob` (see there for how a job runs and settles): each job's handler
 * does its outside work, then its recorded outcome commits in the same transaction as the job's completion
 * (which checks the lease is still ours), so a job's effects are recorded exactly once even when workers
 * crash or race. A heartbeat renews the lease of every job in
 * hand, so a slow job (a slow SMTP server, a big PDF) is never handed to a second worker while this one
 * is alive; only a worker that died (or stalled longer than the lease) loses its jobs to another.
 */
export const startWorker = (o: WorkerOptions): RunningWorker => {
  const kinds = Object.keys(o.handlers) as JobKind[];
  const pollMs = o.pollMs ?? 1000;
  const leaseMs = o.leaseMs ?? 5 * 60_000;
  const heartbeatMs = Math.max(1, o.heartbeatMs ?? Math.floor(leaseMs / 3));
  const batch = Math.max(1, o.batch ?? 1);
  const log = o.logger ?? silent;
  let running = true;
  const sleepers = new Set<() => void>();
  /**
   * Counts wake-ups, so a loop that was busy claiming when one came (the job committed after its claim
   * looked) does not then sleep through it: it claims again instead.
   */
  let wakes = 0;
  const wakeAll = () => {
    wakes += 1;
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

  const inHand = new Map<string, InHand>();

  /** One heartbeat: renews every lease in hand, side by side; a `false` answer means that job was lost. */
  const renewLeases = async () => {
    const until = new Date(o.clock.now().getTime() + leaseMs).toISOString();
    await Promise.all(
      [...inHand].map(async ([id, hand]) => {
        if (hand.lost || hand.settling) return;
        const renewed = await o.stores.jobs.extendLease(id, o.id, until)();
        // A store failure proves nothing either way: the next heartbeat tries again, and the commit checks the lease.
        if (E.isLeft(renewed)) return log.warn({ job: id, error: renewed.left._tag }, 'renewing a job lease failed; trying again at the next heartbeat');
        if (!renewed.right && !hand.settling && inHand.get(id) === hand) {
          hand.lost = true;
          log.warn({ job: id }, 'job lease lost: another worker has the job; this worker will not record its outcome');
        }
      }),
    );
  };
  let heartbeat: ReturnType<typeof setTimeout> | undefined;
  let beating = true;
  const beat = () => {
    // Real time, not the clock: this measures how late the process itself is (a blocked event loop, a starved CPU).
    const due = Date.now() + heartbeatMs;
    heartbeat = setTimeout(() => {
      const started = Date.now();
      const holding = inHand.size;
      void renewLeases()
        .catch((e: unknown) => log.error({ err: String(e) }, 'job heartbeat crashed'))
        .finally(() => {
          const late = started - due;
          const took = Date.now() - started;
          // Past a third of the lease on top of the interval, the leases in hand are at risk: say so, with the numbers.
          if (holding > 0 && late + took > heartbeatMs)
            log.warn({ lateMs: late, renewMs: took, jobsInHand: holding, leaseMs }, 'job heartbeat slow: leases in hand are at risk (event loop blocked or database slow)');
          if (beating) beat();
        });
    }, heartbeatMs);
  };
  beat();

  const run = runClaimedJob({ stores: o.stores, uow: o.uow, clock: o.clock, handlers: o.handlers, maxAttempts: o.maxAttempts, retryDelayMs: o.retryDelayMs });

  const runJob = async (job: Job, hand: InHand) => {
    if (hand.lost) return log.warn(jobFields(job), 'job lease lost before the job started; another worker has it');
    // Another worker holds the job once a heartbeat found the lease gone, and records its outcome; committing
    // ours too would record it twice. Past this point the commit itself checks the lease.
    const outcome = await run(job, o.id, () => {
      if (hand.lost) return true;
      hand.settling = true;
      return false;
    })();
    switch (outcome._tag) {
      case 'Done':
        return log.info(jobFields(job), 'job done');
      case 'LeaseLost':
        return log.warn(jobFields(job), 'job lease lost while the job ran; its outcome is left to the worker that has it');
      case 'Retrying':
        return log.warn({ ...jobFields(job), error: outcome.error, permanent: false, buried: false, nextRunAt: outcome.nextRunAt, settled: outcome.settled }, 'job failed, will retry');
      case 'Buried':
        // A buried job never runs again by itself: say so loudly, with the way back once the cause is fixed.
        return log.error(
          { ...jobFields(job), error: outcome.error, permanent: outcome.permanent, buried: true, nextRunAt: null, settled: outcome.settled, retryWith: `esig jobs retry ${job.id}` },
          'job buried',
        );
    }
  };

  const loop = async () => {
    while (running) {
      const seen = wakes;
      const now = o.clock.now();
      const claimed = await o.stores.jobs.claim(kinds, o.id, now.toISOString(), new Date(now.getTime() + leaseMs).toISOString(), batch)();
      if (E.isLeft(claimed)) {
        log.error({ error: claimed.left._tag }, 'claiming jobs failed');
        await sleep(pollMs);
        continue;
      }
      const hands = claimed.right.map((job) => {
        const hand: InHand = { lost: false, settling: false };
        inHand.set(job.id, hand);
        return hand;
      });
      for (const [i, job] of claimed.right.entries()) {
        const hand = hands[i]!;
        try {
          // Finish the job in hand even when asked to stop; the rest were only leased and are given back (their
          // lease ends now), unchanged otherwise: not starting a job is no failure of it.
          if (running) await runJob(job, hand);
          else {
            hand.settling = true;
            await o.stores.jobs.extendLease(job.id, o.id, o.clock.now().toISOString())();
          }
        } finally {
          inHand.delete(job.id);
        }
      }
      if (claimed.right.length === batch) continue;
      const next = await o.stores.jobs.nextRunAt(kinds)();
      const untilNext = E.isRight(next) && next.right !== null ? new Date(next.right).getTime() - o.clock.now().getTime() : pollMs;
      if (running && wakes === seen) await sleep(Math.max(10, Math.min(pollMs, untilNext)));
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
      beating = false;
      clearTimeout(heartbeat);
    },
  };
};
