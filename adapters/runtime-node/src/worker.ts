import * as E from 'fp-ts/lib/Either.js';
import type { Clock, Job, JobHandlers, JobKind, JobRunOutcome, Stores, UnitOfWork } from '@esig/core';
import type { PerformedJob } from '@esig/core';
import { performClaimedJob, requestIdOf, settleClaimedJobs } from '@esig/core';

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
   * Jobs one claim takes at most. By default a claim takes as many jobs as loops are waiting for one (the
   * loops that finish together claim together, in one statement), so no job waits in this worker while
   * another worker could run it. Set, a claim takes up to `batch` jobs, and those no loop can start yet
   * wait in this worker's hand (renewed by every heartbeat, out of reach of other workers): fewer claim
   * statements at the price of less sharing between workers.
   */
  readonly batch?: number;
  /**
   * Job loops run side by side in this worker. Most jobs wait on the network (SMTP, webhook receivers), so
   * several loops overlap those waits; each loop runs one job at a time, so no job runs twice at once.
   */
  readonly concurrency?: number;
  /**
   * Longest time a finished job's outcome waits for those of the other loops, to be committed with them;
   * default 10 ms. Outcomes are committed together as soon as no loop is still running a handler, so this
   * only bounds the wait behind a slow one (a receiver that takes seconds). On SQLite the outcomes committed
   * together share one COMMIT.
   */
  readonly settleWaitMs?: number;
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

/** What a claim brought this worker: the jobs new to it, and whether it found as many as it asked for; or that it failed. */
type Claimed = { readonly fresh: number; readonly full: boolean } | 'failed';

/** A job this worker holds: claimed and not yet settled. */
interface InHand {
  /** A renewal found another holder: the job is no longer ours, and its outcome must not be recorded here. */
  lost: boolean;
  /** Its outcome is being committed (the commit checks the lease itself): a renewal's answer no longer matters. */
  settling: boolean;
  /**
   * When the lease ends as far as this worker knows (ms, on its clock): set by the claim, moved on by each
   * renewal that got through. Past it, another worker may hold the job, so a job not started yet is not started.
   */
  until: number;
  /**
   * A claim took the job again while its outcome was being recorded: a retry due at once, committed before the
   * rest of its group, made it claimable. Run again once its loop has heard that outcome, if it was that retry.
   */
  reclaimed?: { readonly job: Job; readonly until: number };
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
  const concurrency = Math.max(1, o.concurrency ?? 1);
  const settleWaitMs = Math.max(0, o.settleWaitMs ?? 10);
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
        if (renewed.right) hand.until = Math.max(hand.until, Date.parse(until));
        else if (!hand.settling && inHand.get(id) === hand) {
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

  const deps = { stores: o.stores, uow: o.uow, clock: o.clock, handlers: o.handlers, maxAttempts: o.maxAttempts, retryDelayMs: o.retryDelayMs };
  const perform = performClaimedJob(deps);
  const settle = settleClaimedJobs(deps);

  const report = (job: Job, outcome: JobRunOutcome) => {
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

  /** Claimed jobs no loop has started yet (in hand: the heartbeat renews them). */
  const claimed: Job[] = [];
  /** Loops waiting for a job now. */
  let waiting = 0;
  /** The claim under way, shared by every loop that finds `claimed` empty meanwhile: how many jobs it brought, or its failure. */
  let claiming: Promise<Claimed> | null = null;
  /**
   * When the next job of these kinds is due. The loops that ran out of work together (one claim found nothing
   * for all of them) share one query: how long to sleep is the same answer for each. Only a query begun after
   * the loop's own claim will do (`claimMore` drops an older one): a loop that has just retried its job sees it
   * due at its new time, where an older answer still shows it leased until its lease ends.
   */
  let asking: ReturnType<ReturnType<typeof o.stores.jobs.nextRunAt>> | null = null;
  const soonestDue = () => {
    if (asking !== null) return asking;
    const query = o.stores.jobs.nextRunAt(kinds)().finally(() => {
      if (asking === query) asking = null;
    });
    asking = query;
    return query;
  };

  /** A job a claim brought: in hand (the heartbeat renews it) and waiting for a loop. */
  const take = (job: Job, until: number) => {
    inHand.set(job.id, { lost: false, settling: false, until });
    claimed.push(job);
  };
  /** Ends this worker's lease on a job it will not run, so the next claim anywhere takes it at once. */
  const release = (jobId: string) => o.stores.jobs.extendLease(jobId, o.id, o.clock.now().toISOString())();
  /** Whether the last claim found as many jobs as it asked for: a backlog, most likely. */
  let lastClaimFull = false;
  const claimMore = async (loops: number = waiting): Promise<Claimed> => {
    // A claim scheduled just before stop() would only take jobs to give back, their attempts counted.
    if (!running) return { fresh: 0, full: false };
    // The loops this claim answers with nothing ask when work is due afresh, not from a query begun before it.
    asking = null;
    const now = o.clock.now();
    const leaseUntil = now.getTime() + leaseMs;
    // As many jobs as loops wait for one (so none is held back from another worker), or `batch` when set.
    const limit = Math.max(1, o.batch ?? loops);
    const got = await o.stores.jobs.claim(kinds, o.id, now.toISOString(), new Date(leaseUntil).toISOString(), limit)();
    if (E.isLeft(got)) {
      lastClaimFull = false;
      log.error({ error: got.left._tag }, 'claiming jobs failed');
      return 'failed';
    }
    const full = got.right.length >= limit;
    lastClaimFull = full;
    let fresh = 0;
    for (const job of got.right) {
      const held = inHand.get(job.id);
      if (held !== undefined) {
        // Its outcome is being recorded: a retry that committed first (no delay), or its lease ran out meanwhile.
        // Which one is known once its loop hears the outcome (`runJob`).
        if (held.settling && !held.lost) {
          held.reclaimed = { job, until: leaseUntil };
          continue;
        }
        // Already in this worker's hand: its lease ran out (renewals failed) and this claim took it again. It is
        // running or waiting here already; a second run would repeat its outside work. The claim renewed it.
        held.until = Math.max(held.until, leaseUntil);
        continue;
      }
      take(job, leaseUntil);
      fresh += 1;
    }
    // Every job it brought was in hand already: for the loops, as if nothing had been due.
    return { fresh, full };
  };
  /** The next job for a loop; `undefined` when none is due (or the worker is stopping). */
  const next = async (): Promise<Job | undefined | 'failed'> => {
    waiting += 1;
    try {
      while (running) {
        const job = claimed.shift();
        if (job !== undefined) return job;
        // The claim starts after this turn's callbacks: the loops that one commit set free (their outcomes were
        // settled together) all ask by then, and one claim serves them all.
        claiming ??= new Promise<void>((r) => setImmediate(r)).then(() => claimMore()).finally(() => (claiming = null));
        const got = await claiming;
        if (got === 'failed') return got;
        // A claim that found fewer jobs than it asked for found all that were due: a loop it left without one
        // goes to sleep until work is due or a wake comes (as when it found none), rather than claiming again
        // at once for nothing, once per job on a queue that is mostly idle.
        if (got.fresh === 0 || (!got.full && claimed.length === 0)) return undefined;
      }
      return undefined;
    } finally {
      waiting -= 1;
    }
  };

  /**
   * Finished jobs waiting to be recorded. They are settled together (`settleClaimedJobs`: on a serial store
   * they share one COMMIT; on PostgreSQL a few share one transaction), once no loop is still running a
   * handler — whose outcome would otherwise follow a moment later in a commit of its own — or once the first
   * has waited `settleWaitMs`.
   */
  const unsettled: Array<{
    readonly job: Job;
    readonly done: PerformedJob;
    readonly hand: InHand;
    readonly answer: (o: JobRunOutcome) => void;
    readonly fail: (e: unknown) => void;
  }> = [];
  let performing = 0;
  let settleTimer: ReturnType<typeof setTimeout> | undefined;
  const settleAll = () => {
    clearTimeout(settleTimer);
    settleTimer = undefined;
    const group = unsettled.splice(0);
    const outcomes = settle(
      o.id,
      group.map((u) => ({
        job: u.job,
        done: u.done,
        lost: () => {
          // Another worker holds the job once a heartbeat found its lease gone, and records its outcome;
          // committing ours too would record it twice. Past this point the commit itself checks the lease.
          if (u.hand.lost) return true;
          u.hand.settling = true;
          return false;
        },
      })),
    );
    // Through a backlog (the last claim came back full), the claim for these loops' next jobs goes out now, beside
    // their outcomes' commit, rather than after it: one round trip fewer between a loop's jobs. Each loop still
    // starts its next job only once its outcome is recorded, so a killed worker leaves at most one unrecorded job
    // per loop; the jobs claimed meanwhile are in hand (renewed, given back on stop) as any claimed job is.
    if (running && lastClaimFull && claiming === null && claimed.length === 0) {
      claiming = claimMore(group.length).finally(() => (claiming = null));
      // No loop may wait for it (a worker stopping): a store that rejects instead of answering Left is not left unheard.
      claiming.catch(() => undefined);
    }
    // The loops hear of their jobs together, once all are recorded, so that they go on in step and the next
    // claim serves them all; each hears only its own failure.
    void Promise.allSettled(outcomes).then((results) =>
      results.forEach((r, i) => (r.status === 'fulfilled' ? group[i]!.answer(r.value) : group[i]!.fail(r.reason))),
    );
  };

  const settleWhenDue = () => {
    if (unsettled.length === 0) return;
    if (performing === 0) settleAll();
    else settleTimer ??= setTimeout(settleAll, settleWaitMs);
  };

  const runJob = async (job: Job) => {
    const hand = inHand.get(job.id)!;
    let outcome: JobRunOutcome | undefined;
    try {
      if (hand.lost) return log.warn(jobFields(job), 'job lease lost before the job started; another worker has it');
      // Renewals did not get through (the database did not answer) and the lease has run out meanwhile: another
      // worker may have claimed the job and be running it. Not starting it is safe; it is claimable again.
      if (o.clock.now().getTime() >= hand.until)
        return log.warn({ ...jobFields(job), leaseUntil: new Date(hand.until).toISOString() }, 'job lease ran out before the job started (renewals failed); left to whoever claims it');
      performing += 1;
      let done: PerformedJob;
      try {
        done = await perform(job)();
      } finally {
        performing -= 1;
      }
      outcome = await new Promise<JobRunOutcome>((answer, fail) => {
        unsettled.push({ job, done, hand, answer, fail });
        settleWhenDue();
      });
      report(job, outcome);
    } finally {
      if (inHand.get(job.id) === hand) inHand.delete(job.id);
      const again = hand.reclaimed;
      if (again !== undefined) {
        // Retried, and the retry committed before the claim that took it again: that claim is the job's lease now,
        // so it runs (this loop or another takes it next). Anything else (recorded done, the lease lost, the settle
        // failed) and the claim may have come first: the job is not run again here, and its lease is given back.
        if (outcome?._tag === 'Retrying' && !inHand.has(job.id)) take(again.job, again.until);
        else void release(job.id);
      }
      // This loop ran a handler until now; the outcomes waiting for it may be due.
      settleWhenDue();
    }
  };

  const loop = async () => {
    while (running) {
      const seen = wakes;
      const job = await next();
      if (job === 'failed') {
        await sleep(pollMs);
        continue;
      }
      if (job !== undefined) {
        await runJob(job);
        continue;
      }
      if (!running) break;
      const nextDue = await soonestDue();
      const untilNext = E.isRight(nextDue) && nextDue.right !== null ? new Date(nextDue.right).getTime() - o.clock.now().getTime() : pollMs;
      if (running && wakes === seen) await sleep(Math.max(10, Math.min(pollMs, untilNext)));
    }
  };

  /** Gives back the jobs claimed but not started (their lease ends now), unchanged otherwise: not starting a job is no failure of it. */
  const giveBack = async () => {
    for (const job of claimed.splice(0)) {
      inHand.get(job.id)!.settling = true;
      await release(job.id);
      inHand.delete(job.id);
    }
  };

  const loops = Array.from({ length: concurrency }, () => loop().catch((e: unknown) => log.error({ err: String(e) }, 'worker loop crashed')));
  // Every loop finishes the job it runs, then the claimed jobs none of them started are given back.
  const finished = Promise.all(loops)
    .then(async () => {
      // A claim still under way (the one beside a commit, which no loop waits for) brings jobs to give back too.
      while (claiming !== null) await claiming.catch(() => undefined);
    })
    .then(giveBack);
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
