import type { Job, JobHandler, JobKind, QueuedJob, Stores } from '@esig/core';
import { storeFailure } from '@esig/core';
import { TENANT_A, createManualClock, createMemoryStores, makeJob, ok } from '@esig/testkit';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningWorker, WorkerLogger } from '../src/worker.js';
import { startWorker } from '../src/worker.js';

// Faults a worker must survive without running a job twice or stopping: a handler that throws, a database
// that does not take its lease renewals. The lease is counted on a manual clock; every wait is for a condition.
const T0 = '2030-01-01T00:00:00.000Z';
const LEASE_MS = 1_000;
const KINDS: readonly JobKind[] = ['seal'];

const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};
const until = async (probe: () => Promise<boolean> | boolean, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
interface Line {
  readonly level: string;
  readonly msg: string;
  readonly fields: Record<string, unknown>;
}
const capture = () => {
  const lines: Line[] = [];
  const logger: WorkerLogger = {
    info: (fields, msg) => lines.push({ level: 'info', msg, fields }),
    warn: (fields, msg) => lines.push({ level: 'warn', msg, fields }),
    error: (fields, msg) => lines.push({ level: 'error', msg, fields }),
  };
  return { lines, logger };
};

const workers: RunningWorker[] = [];
const gates: Array<() => void> = [];
afterEach(async () => {
  for (const g of gates.splice(0)) g();
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

const setup = () => {
  const { stores, uow } = createMemoryStores();
  const clock = createManualClock(T0);
  const runs: Array<{ readonly worker: string; readonly job: string }> = [];
  const gate = deferred();
  gates.push(gate.resolve);
  const started = deferred();
  /** Records an outcome row `outcome:<job id>` in the job's commit. */
  const outcome = (job: Job) => (tx: Stores) =>
    pipe(tx.jobs.enqueue(makeJob(TENANT_A, { kind: 'expire', runAt: '2099-01-01T00:00:00.000Z', dedupeKey: `outcome:${job.id}` })), TE.map(() => undefined));
  const gatedSeal =
    (worker: string): JobHandler =>
    (job: Job) => {
      runs.push({ worker, job: job.id });
      started.resolve();
      return pipe(
        TE.fromTask(() => gate.promise),
        TE.map(() => outcome(job)),
      );
    };
  const start = (id: string, over: Partial<Parameters<typeof startWorker>[0]> = {}) => {
    const w = startWorker({ id, stores, uow, clock, handlers: { seal: gatedSeal(id) }, leaseMs: LEASE_MS, heartbeatMs: 10, pollMs: 10, ...over });
    workers.push(w);
    return w;
  };
  const list = (): Promise<readonly QueuedJob[]> => ok(stores.jobs.list({ limit: 100 }));
  const outcomes = async () => (await ok(stores.jobs.list({ kinds: ['expire'], limit: 100 }))).map((j) => j.dedupeKey);
  const enqueueSeals = async (n: number) => {
    const jobs = Array.from({ length: n }, (_, i) => makeJob(TENANT_A, { kind: 'seal', runAt: T0, payload: { requestId: `req_${i}` } }));
    for (const j of jobs) await ok(stores.jobs.enqueue(j));
    return jobs;
  };
  /** The same stores, but every lease renewal fails (a database that does not answer this worker). */
  const renewalsFail: Stores = { ...stores, jobs: { ...stores.jobs, extendLease: () => TE.left(storeFailure(new Error('connection reset'))) } };
  return { stores, uow, clock, runs, gate, started, start, list, outcomes, enqueueSeals, outcome, renewalsFail };
};

describe('the job worker, when a handler throws', () => {
  it('does not stop the worker: the next job still runs (concurrency 1)', async () => {
    const s = setup();
    const { lines, logger } = capture();
    const [a, b] = await s.enqueueSeals(2);
    // a's handler throws (a bug in a handler, a library that throws instead of returning Left); b's is fine.
    const seal: JobHandler = (job) => (job.id === a!.id ? () => Promise.reject(new Error('boom')) : TE.right(s.outcome(job)));
    s.start('w1', { handlers: { seal }, logger, concurrency: 1 });
    // Without the guard, a's handler took the only loop down ('worker loop crashed') and nothing claimed b.
    await until(async () => (await s.outcomes()).includes(`outcome:${b!.id}`), 'b to be done', 5_000);
    expect(lines.filter((l) => l.msg === 'worker loop crashed')).toEqual([]);
  });
});

describe('the job worker, when its lease renewals fail', () => {
  it('a job claimed in a batch is not started once its lease has run out and another worker holds it', async () => {
    const s = setup();
    const { lines, logger } = capture();
    const [a, b] = await s.enqueueSeals(2);
    // w1 claims a and b in one batch; from then on none of its renewals gets through.
    s.start('w1', { batch: 2, concurrency: 1, logger, stores: s.renewalsFail });
    await s.started.promise;
    expect(s.runs).toEqual([{ worker: 'w1', job: a!.id }]);
    // Far past w1's lease (it could renew nothing): the thief takes both jobs, legitimately.
    s.clock.advance(LEASE_MS * 5);
    const stolen = await ok(s.stores.jobs.claim(KINDS, 'thief', s.clock.now().toISOString(), new Date(s.clock.now().getTime() + 60_000).toISOString(), 10));
    expect(stolen.map((j) => j.id).sort()).toEqual([a!.id, b!.id].sort());
    // a's handler finishes (its outcome is correctly refused by the commit); w1's only loop then turns to b.
    s.gate.resolve();
    await until(
      () => s.runs.some((r) => r.worker === 'w1' && r.job === b!.id) || lines.some((l) => l.fields['job'] === b!.id),
      'w1 to start b or give it up',
    );
    // b's lease is the thief's: w1 must not run b's outside work (a second mail, a second POST).
    expect(s.runs.filter((r) => r.worker === 'w1').map((r) => r.job)).toEqual([a!.id]);
  });

  it('two loops of one worker never run the same job at once', async () => {
    const s = setup();
    const [a] = await s.enqueueSeals(1);
    let claims = 0;
    const stores: Stores = {
      ...s.renewalsFail,
      jobs: { ...s.renewalsFail.jobs, claim: (...args: Parameters<Stores['jobs']['claim']>) => ((claims += 1), s.renewalsFail.jobs.claim(...args)) },
    };
    s.start('w1', { concurrency: 2, stores });
    await s.started.promise;
    // w1's renewals all fail; once its lease has run out, its idle loop (polling) finds a claimable again.
    s.clock.advance(LEASE_MS * 5);
    await until(async () => (await s.list()).some((j) => j.id === a!.id && j.attempts >= 2), 'w1 to claim a a second time');
    const seen = claims;
    // Either the second loop runs a again (the bug), or it goes back to polling (a claim after this one).
    await until(() => s.runs.length >= 2 || claims > seen, 'w1 to run a again or to poll on');
    expect(s.runs).toEqual([{ worker: 'w1', job: a!.id }]);
  });
});
