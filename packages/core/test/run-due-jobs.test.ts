import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { JobHandler, TransactionOptions, UnitOfWork } from '@esig/core';
import { SETTLE_GROUP_LOCK_TIMEOUT_MS, jobFailure, jobHandlers, performClaimedJob, runClaimedJob, runDueJobs, settleClaimedJobs, signAsRecipient, withRelease } from '@esig/core';
import { right } from './support.js';
import { CLIENT, eventsOf, requestNow, sentRequest, signInput, world } from './world.js';

const withHandlers = (w: ReturnType<typeof world>) => ({ ...w.deps, handlers: jobHandlers({ ...w.deps, webhooks: w.deps }) });

describe('runDueJobs', () => {
  it('takes a request from send to its sealed PDF with no worker running: invitations, then the seal and the notices', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const first = await right(runDueJobs(withHandlers(w))());
    expect(first.runs.map((r) => r.kind).sort()).toEqual(['mail.invite', 'mail.invite']);
    expect([first.done, first.retrying, first.buried]).toEqual([2, 0, 0]);
    expect(w.mail.sent.map((m) => m.message.to).sort()).toEqual(['signer1@example.com', 'signer2@example.com']);
    // Nothing is due any more: a second run does nothing.
    expect((await right(runDueJobs(withHandlers(w))())).runs).toEqual([]);

    for (const signer of s.signers) await right(signAsRecipient(w.deps)(signer.token, signInput(signer), CLIENT));
    const after = await right(runDueJobs(withHandlers(w))());
    expect(after.runs.map((r) => r.kind)).toEqual(['seal.complete', 'mail.completed', 'mail.completed']);
    const sealed = await requestNow(w, s.p.tenant, s.req.id);
    expect(sealed.finishedSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(await right(w.h.stores.documentContents.get(s.p.tenant, { kind: 'finished', requestId: s.req.id }))).not.toBeNull();
  });

  it('schedules a failing job for later instead of running it again at once, and stops at the limit', async () => {
    const w = world();
    await sentRequest(w, { signers: [{}, {}, {}] });
    const failing: JobHandler = () => TE.left(jobFailure('SMTP server down'));
    const deps = { ...w.deps, handlers: { 'mail.invite': failing } };
    const run = await right(runDueJobs(deps)({ limit: 2 }));
    expect(run.runs).toHaveLength(2);
    expect(run.runs.every((r) => r.outcome._tag === 'Retrying')).toBe(true);
    const third = await right(runDueJobs(deps)());
    // The two that failed are not due before their backoff: only the third one runs.
    expect(third.runs).toHaveLength(1);
  });
});

/** A sent request's invitation job, claimed by `w1` for a minute. */
const claimedInvitation = async () => {
  const w = world();
  await sentRequest(w);
  const [job] = await right(w.h.stores.jobs.claim(['mail.invite'], 'w1', w.h.clock.now().toISOString(), new Date(w.h.clock.now().getTime() + 60_000).toISOString(), 1));
  return { w, deps: withHandlers(w), job };
};

describe('runClaimedJob', () => {
  it('records nothing when the lease was lost while the handler ran, and buries a permanent failure at once', async () => {
    const { w, deps, job } = await claimedInvitation();
    expect(await runClaimedJob(deps)(job!, 'w1', () => true)()).toEqual({ _tag: 'LeaseLost' });
    // The job is still there, held by w1: the lost run changed nothing.
    expect((await right(w.h.stores.jobs.list({ ids: [job!.id], limit: 10 }))).map((j) => j.id)).toEqual([job!.id]);
    const refused: JobHandler = () => TE.left(jobFailure('550 no such mailbox', true));
    expect(await runClaimedJob({ ...deps, handlers: { 'mail.invite': refused } })(job!, 'w1')()).toMatchObject({ _tag: 'Buried', permanent: true, settled: true });
    // Buried: never due again by itself.
    expect(await right(w.h.stores.jobs.nextRunAt(['mail.invite']))).toBeNull();
  });
});

describe('performClaimedJob', () => {
  it('turns a handler that throws or rejects into a failure worth another attempt, so the run goes on', async () => {
    const { deps, job } = await claimedInvitation();
    const throws: JobHandler = () => {
      throw new Error('template missing');
    };
    const rejects: JobHandler = () => () => Promise.reject(new Error('socket hang up'));
    for (const [handler, detail] of [
      [throws, 'the mail.invite handler threw: template missing'],
      [rejects, 'the mail.invite handler threw: socket hang up'],
    ] as const) {
      const done = await performClaimedJob({ ...deps, handlers: { 'mail.invite': handler } })(job!)();
      expect(done).toEqual({ _tag: 'Left', left: { _tag: 'JobFailure', permanent: false, detail } });
    }
    // Through runClaimedJob: scheduled again with backoff, its last error recorded.
    expect(await runClaimedJob({ ...deps, handlers: { 'mail.invite': rejects } })(job!, 'w1')()).toMatchObject({ _tag: 'Retrying', error: 'the mail.invite handler threw: socket hang up', settled: true });
  });
});

describe('settleClaimedJobs', () => {
  /** Three sent requests' invitations, claimed by `w1` and their mail sent; transactions counted, run side by side unless `serial`. */
  const performed = async (serial: boolean) => {
    const w = world();
    for (let i = 0; i < 3; i++) await sentRequest(w);
    const now = w.h.clock.now();
    const jobs = await right(w.h.stores.jobs.claim(['mail.invite'], 'w1', now.toISOString(), new Date(now.getTime() + 60_000).toISOString(), 10));
    expect(jobs).toHaveLength(3);
    const counted = { transactions: 0, options: [] as Array<TransactionOptions | undefined> };
    const uow: UnitOfWork = {
      serial,
      transaction: (work, options) => {
        counted.transactions += 1;
        counted.options.push(options);
        return w.h.uow.transaction(work, options);
      },
    };
    const deps = { ...withHandlers(w), uow };
    const done = await Promise.all(jobs.map((job) => performClaimedJob(deps)(job)()));
    return { w, deps, jobs, done, counted };
  };
  const notified = async (w: ReturnType<typeof world>) => (await eventsOf(w, w.p.tenant, 'signer.notified')).length;
  const left = async (w: ReturnType<typeof world>, ids: readonly string[]) => (await right(w.h.stores.jobs.list({ ids, limit: 10 }))).map((j) => j.id);

  it('side by side, records every job of the group in one transaction', async () => {
    const { w, deps, jobs, done, counted } = await performed(false);
    const outcomes = await Promise.all(settleClaimedJobs(deps)('w1', jobs.map((job, i) => ({ job, done: done[i]! }))));
    expect(outcomes).toEqual([{ _tag: 'Done' }, { _tag: 'Done' }, { _tag: 'Done' }]);
    expect(counted.transactions).toBe(1);
    // It would rather run its members alone than wait long for a lock (it holds its own meanwhile). Its
    // records, like commands, stop at their first failed write, so the store need not wait for each one.
    expect(counted.options).toEqual([{ deferWrites: true, rerunnable: true, lockTimeoutMs: SETTLE_GROUP_LOCK_TIMEOUT_MS }]);
    expect(await notified(w)).toBe(3);
    expect(await left(w, jobs.map((j) => j.id))).toEqual([]);
  });

  it('releases what each record set aside once it has run, recorded in a group or alone', async () => {
    for (const serial of [false, true]) {
      const { deps, jobs, done, counted } = await performed(serial);
      const released: string[] = [];
      const withReleases = done.map((d, i) => E.map((record: Parameters<typeof withRelease>[0]) => withRelease(record, async () => void released.push(jobs[i]!.id)))(d));
      expect(await Promise.all(settleClaimedJobs(deps)('w1', jobs.map((job, i) => ({ job, done: withReleases[i]! }))))).toEqual([{ _tag: 'Done' }, { _tag: 'Done' }, { _tag: 'Done' }]);
      expect(counted.transactions, serial ? 'alone' : 'grouped').toBe(serial ? 3 : 1);
      await new Promise((ok) => setImmediate(ok));
      expect(released.sort(), serial ? 'alone' : 'grouped').toEqual(jobs.map((j) => j.id).sort());
    }
  });

  it('in turns, settles each alone (the store shares their commit)', async () => {
    const { w, deps, jobs, done, counted } = await performed(true);
    expect(await Promise.all(settleClaimedJobs(deps)('w1', jobs.map((job, i) => ({ job, done: done[i]! }))))).toEqual([{ _tag: 'Done' }, { _tag: 'Done' }, { _tag: 'Done' }]);
    expect(counted.transactions).toBe(3);
    expect(counted.options).toEqual([{ deferWrites: true, rerunnable: true }, { deferWrites: true, rerunnable: true }, { deferWrites: true, rerunnable: true }]);
    expect(await notified(w)).toBe(3);
  });

  it('when one member has lost its lease, keeps nothing of the group and settles each alone: the others are recorded once, that one not at all', async () => {
    const { w, deps, jobs, done, counted } = await performed(false);
    // The second job's lease ran out and another worker took it: w1's completion of it must fail.
    w.h.clock.advance(60_001);
    const now = w.h.clock.now();
    const taken = await right(w.h.stores.jobs.claim(['mail.invite'], 'w2', now.toISOString(), new Date(now.getTime() + 60_000).toISOString(), 3));
    expect(taken).toHaveLength(3);
    for (const j of [jobs[0]!, jobs[2]!]) await right(w.h.stores.jobs.retry(j.id, 'w2', now.toISOString(), 'given back'));
    const again = await right(w.h.stores.jobs.claim(['mail.invite'], 'w1', now.toISOString(), new Date(now.getTime() + 60_000).toISOString(), 3));
    expect(again.map((j) => j.id).sort()).toEqual([jobs[0]!.id, jobs[2]!.id].sort());
    const outcomes = await Promise.all(settleClaimedJobs(deps)('w1', jobs.map((job, i) => ({ job, done: done[i]! }))));
    expect(outcomes).toEqual([{ _tag: 'Done' }, { _tag: 'LeaseLost' }, { _tag: 'Done' }]);
    // The group, then each member alone.
    expect(counted.transactions).toBe(4);
    expect(await notified(w)).toBe(2);
    expect(await left(w, jobs.map((j) => j.id))).toEqual([jobs[1]!.id]);
  });

  it('settles a failed handler and a lease known lost on their own paths, and groups the rest', async () => {
    const { w, deps, jobs, done, counted } = await performed(false);
    const outcomes = await Promise.all(
      settleClaimedJobs(deps)('w1', [
        { job: jobs[0]!, done: done[0]! },
        { job: jobs[1]!, done: { _tag: 'Left', left: jobFailure('SMTP server down') } },
        { job: jobs[2]!, done: done[2]!, lost: () => true },
      ]),
    );
    expect(outcomes).toMatchObject([{ _tag: 'Done' }, { _tag: 'Retrying', error: 'SMTP server down', settled: true }, { _tag: 'LeaseLost' }]);
    // The first alone (a group of one); the retry is scheduled outside a transaction; the lost one records nothing.
    expect(counted.transactions).toBe(1);
    expect(await notified(w)).toBe(1);
  });

  it('answers each job on its own: a member whose settle throws rejects alone, and the others are recorded', async () => {
    for (const serial of [false, true]) {
      const { w, deps, jobs, done } = await performed(serial);
      const answers = settleClaimedJobs(deps)(
        'w1',
        jobs.map((job, i) => ({
          job,
          done: done[i]!,
          lost: () => {
            if (i === 1) throw new Error('a bug in the caller');
            return false;
          },
        })),
      );
      const settled = await Promise.allSettled(answers);
      expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect(settled.filter((r) => r.status === 'fulfilled').map((r) => r.value)).toEqual([{ _tag: 'Done' }, { _tag: 'Done' }]);
      expect(await notified(w)).toBe(2);
    }
  });

  it('falls back to each alone when the group’s transaction itself throws', async () => {
    const { w, deps, jobs, done, counted } = await performed(false);
    let first = true;
    const throwing: UnitOfWork = {
      transaction: (work, options) => {
        if (first) {
          first = false;
          throw new Error('the store threw');
        }
        return deps.uow.transaction(work, options);
      },
    };
    const outcomes = await Promise.all(settleClaimedJobs({ ...deps, uow: throwing })('w1', jobs.map((job, i) => ({ job, done: done[i]! }))));
    expect(outcomes).toEqual([{ _tag: 'Done' }, { _tag: 'Done' }, { _tag: 'Done' }]);
    expect(counted.transactions).toBe(3);
    expect(counted.options).toEqual([{ deferWrites: true, rerunnable: true }, { deferWrites: true, rerunnable: true }, { deferWrites: true, rerunnable: true }]);
    expect(await notified(w)).toBe(3);
  });
});
