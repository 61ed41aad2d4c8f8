import type { Job, JobKind, NewJob, QueuedJob, Stores } from '@esig/core';
import { JOB_KINDS, concurrentModification } from '@esig/core';
import * as TE from '@esig/core/task-either';
import { pipe } from 'fp-ts/lib/function.js';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, at, fails, makeJob, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { pause } from './harness.js';

const W1 = 'worker-1';
const W2 = 'worker-2';
const ALL_KINDS: readonly JobKind[] = JOB_KINDS;
/** Far beyond every runAt and lease in these tests. */
const LATER = 1_000_000;

/** What `claim` hands out for a job enqueued as `job`, after `attempts` claims. */
const claimed = (job: NewJob, attempts: number, over: Partial<Omit<Job, 'kind' | 'payload'>> = {}): Job => ({ ...job, notes: {}, attempts, lastError: null, ...over }) as Job;

export const jobsContract = (h: Harness) =>
  describe('jobs', () => {
    const enqueue = (job: NewJob) => ok(h().stores.jobs.enqueue(job));
    /** Claims at `now` (seconds) with a lease of `leaseS` seconds. */
    const claim = (kinds: readonly JobKind[], worker: string, now: number, leaseS = 60, limit = 10) =>
      ok(h().stores.jobs.claim(kinds, worker, at(now), at(now + leaseS), limit));
    const ids = (jobs: ReadonlyArray<{ readonly id: string }>) => jobs.map((j) => j.id);

    it('claim hands out every field as enqueued, from every tenant, with the attempt counted', async () => {
      const a = makeJob(TENANT_A, { runAt: at(-2), dedupeKey: 'mail.invite:req_1:rcp_1', createdAt: at(-3) });
      const b = makeJob(TENANT_A_LIVE, { runAt: at(-1), kind: 'remind.auto', payload: { requestId: 'req_3', round: 12 } });
      const c = makeJob(TENANT_B, { runAt: at(-1.5), kind: 'seal', payload: { requestId: 'req_2' } });
      for (const j of [a, b, c]) expect(await enqueue(j)).toBe(true);
      expect(await claim(['mail.invite', 'seal', 'remind.auto'], W1, 0)).toEqual([claimed(a, 1), claimed(c, 1), claimed(b, 1)]);
    });

    it('a taken dedupe key makes enqueue answer false and write nothing, until the job is gone', async () => {
      const first = makeJob(TENANT_A, { dedupeKey: 'seal:req_1', kind: 'seal' });
      expect(await enqueue(first)).toBe(true);
      const twin = makeJob(TENANT_B, { dedupeKey: 'seal:req_1', kind: 'mail.invite', runAt: at(-10) });
      expect(await enqueue(twin)).toBe(false);
      expect(await claim(ALL_KINDS, W1, 0)).toEqual([claimed(first, 1)]);
      expect(await ok(h().stores.jobs.complete(first.id, W1))).toBeUndefined();
      // `complete` removed the job, so its key no longer exists.
      expect(await enqueue(twin)).toBe(true);
      expect(await claim(ALL_KINDS, W1, 0)).toEqual([claimed(twin, 1)]);
    });

    it('jobs without a dedupe key never collide', async () => {
      const jobs = [makeJob(TENANT_A), makeJob(TENANT_A), makeJob(TENANT_A)];
      for (const j of jobs) expect(await enqueue(j)).toBe(true);
      expect(ids(await claim(ALL_KINDS, W1, 0))).toEqual(ids(jobs));
    });

    it('of concurrent enqueues with one dedupe key exactly one is written', async () => {
      const jobs = Array.from({ length: 6 }, () => makeJob(TENANT_A, { dedupeKey: 'mail.completed:req_9' }));
      const results = await Promise.all(jobs.map(enqueue));
      expect(results.filter((x) => x)).toHaveLength(1);
      expect(ids(await claim(ALL_KINDS, W1, 0))).toEqual([jobs[results.indexOf(true)]!.id]);
    });

    it('claim hands out only due jobs of the asked kinds, by runAt then id, at most limit at a time', async () => {
      const early = makeJob(TENANT_A, { kind: 'seal', runAt: at(-9) });
      const tieFirst = makeJob(TENANT_A, { runAt: at(-5) });
      const tieSecond = makeJob(TENANT_B, { kind: 'seal', runAt: at(-5) });
      const dueNow = makeJob(TENANT_A, { runAt: at(0) });
      const notYet = makeJob(TENANT_A, { runAt: at(0.001) });
      const otherKind = makeJob(TENANT_A, { kind: 'expire', runAt: at(-100) });
      // Inserted out of order, so that insertion order gives neither the runAt nor the id order.
      for (const j of [notYet, tieSecond, dueNow, otherKind, tieFirst, early]) await enqueue(j);
      const kinds: JobKind[] = ['mail.invite', 'seal'];
      expect(ids(await claim(kinds, W1, 0, 60, 2))).toEqual([early.id, tieFirst.id]);
      expect(ids(await claim(kinds, W1, 0, 60, 2))).toEqual([tieSecond.id, dueNow.id]);
      expect(await claim(kinds, W1, 0, 60, 2)).toEqual([]);
      expect(await claim([], W1, LATER)).toEqual([]);
      expect(ids(await claim(['expire'], W1, 0))).toEqual([otherKind.id]);
      expect(ids(await claim(kinds, W1, 0.001))).toEqual([notYet.id]);
    });

    it('a leased job is not claimed again until its lease ends, then it is, with attempts counted up', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      expect(await claim(ALL_KINDS, W1, 0, 30)).toEqual([claimed(job, 1)]);
      for (const [worker, now] of [[W2, 10], [W2, 29.999], [W1, 29.999]] as const) expect(await claim(ALL_KINDS, worker, now)).toEqual([]);
      expect(await claim(ALL_KINDS, W2, 30, 30)).toEqual([claimed(job, 2)]);
      expect(await claim(ALL_KINDS, W1, 45)).toEqual([]);
      expect(await claim(ALL_KINDS, W1, 60)).toEqual([claimed(job, 3)]);
    });

    it('complete removes the job only for the worker holding its lease', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0, 30);
      expect(await fails(h().stores.jobs.complete(job.id, W2))).toEqual(concurrentModification('job', job.id));
      expect(await ok(h().stores.jobs.complete(job.id, W1))).toBeUndefined();
      expect(await claim(ALL_KINDS, W2, LATER)).toEqual([]);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBeNull();
      expect(await fails(h().stores.jobs.complete(job.id, W1))).toEqual(concurrentModification('job', job.id));
      expect(await fails(h().stores.jobs.complete('job_unknown', W1))).toEqual(concurrentModification('job', 'job_unknown'));
    });

    it('complete after the lease was lost to another worker fails and keeps the job', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0, 30);
      expect(await claim(ALL_KINDS, W2, 30, 60)).toEqual([claimed(job, 2)]);
      expect(await fails(h().stores.jobs.complete(job.id, W1))).toEqual(concurrentModification('job', job.id));
      // Still there, still leased to W2.
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(90));
      expect(await claim(ALL_KINDS, W1, 89.999)).toEqual([]);
      expect(await ok(h().stores.jobs.complete(job.id, W2))).toBeUndefined();
    });

    it('retry releases the lease and reschedules the job with its error, only for the lease holder', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0, 60);
      await ok(h().stores.jobs.retry(job.id, W2, at(1), 'not mine'));
      expect(await claim(ALL_KINDS, W2, 30)).toEqual([]);
      await ok(h().stores.jobs.retry(job.id, W1, at(100), 'SMTP 451 try later'));
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(100));
      expect(await claim(ALL_KINDS, W2, 99.999)).toEqual([]);
      expect(await claim(ALL_KINDS, W2, 100, 60)).toEqual([claimed(job, 2, { runAt: at(100), lastError: 'SMTP 451 try later' })]);
      // Rescheduled before the lease would have ended: the lease is gone, so runAt alone decides.
      await ok(h().stores.jobs.retry(job.id, W2, at(101), 'again'));
      expect(await claim(ALL_KINDS, W1, 101)).toEqual([claimed(job, 3, { runAt: at(101), lastError: 'again' })]);
    });

    it('bury keeps the job dead: never claimed again, not counted by nextRunAt, its dedupe key still taken', async () => {
      const job = makeJob(TENANT_A, { dedupeKey: 'mail.invite:req_1:rcp_1' });
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0, 30);
      await ok(h().stores.jobs.bury(job.id, W2, 'not mine'));
      expect(await claim(ALL_KINDS, W2, 30, 30)).toEqual([claimed(job, 2)]);
      await ok(h().stores.jobs.bury(job.id, W2, '550 mailbox unavailable'));
      await ok(h().stores.jobs.retry(job.id, W2, at(0), 'revived?'));
      for (const worker of [W1, W2]) expect(await claim(ALL_KINDS, worker, LATER)).toEqual([]);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBeNull();
      expect(await fails(h().stores.jobs.complete(job.id, W2))).toEqual(concurrentModification('job', job.id));
      expect(await enqueue(makeJob(TENANT_A, { dedupeKey: job.dedupeKey }))).toBe(false);
    });

    it('nextRunAt is the soonest runAt of the live jobs of those kinds, a leased job counting at its lease end', async () => {
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBeNull();
      const sealA = makeJob(TENANT_A, { kind: 'seal', runAt: at(50) });
      const invite = makeJob(TENANT_B, { kind: 'mail.invite', runAt: at(20) });
      const sealB = makeJob(TENANT_A_LIVE, { kind: 'seal', runAt: at(80) });
      const expire = makeJob(TENANT_A, { kind: 'expire', runAt: at(5) });
      for (const j of [sealA, invite, sealB, expire]) await enqueue(j);
      const next = (kinds: readonly JobKind[]) => ok(h().stores.jobs.nextRunAt(kinds));
      expect(await next(['seal'])).toBe(at(50));
      expect(await next(['seal', 'mail.invite'])).toBe(at(20));
      expect(await next(ALL_KINDS)).toBe(at(5));
      expect(await next(['remind.auto'])).toBeNull();
      expect(await next([])).toBeNull();
      expect(ids(await claim(['seal'], W1, 60, 140, 1))).toEqual([sealA.id]);
      expect(await next(['seal'])).toBe(at(80));
      expect(ids(await claim(['seal'], W1, 80, 20))).toEqual([sealB.id]);
      expect(await next(['seal'])).toBe(at(100));
    });

    it('concurrent claimers, at top level and inside transactions, get each of 50 jobs exactly once', async () => {
      const kinds: JobKind[] = ['mail.invite', 'seal', 'expire'];
      const jobs = Array.from({ length: 50 }, (_, i) =>
        makeJob(i % 2 === 0 ? TENANT_A : TENANT_B, { kind: kinds[i % 3]!, runAt: at(-(i % 7)) }),
      );
      for (const j of jobs) await enqueue(j);
      const claimer = async (i: number): Promise<Job[]> => {
        const worker = `worker-${i}`;
        const got: Job[] = [];
        // Bounded: a queue that hands jobs out twice must fail here, not loop forever.
        for (let round = 0; round < 100; round++) {
          const take = (s: Stores) => s.jobs.claim(kinds, worker, at(0), at(600), 1 + (i % 3));
          // Inside a transaction, the work yields before committing, so other claimers get to run meanwhile.
          const batch = await ok(i % 2 === 0 ? take(h().stores) : h().uow.transaction((tx) => pipe(take(tx), TE.chainFirstTaskK(() => pause(i % 3)))));
          if (batch.length === 0) return got;
          got.push(...batch);
          await pause(round % 2)();
        }
        return got;
      };
      const results = await Promise.all(Array.from({ length: 6 }, (_, i) => claimer(i)));
      const all = results.flat();
      expect(all.map((j) => j.id).sort()).toEqual(jobs.map((j) => j.id).sort());
      for (const j of all) expect(j.attempts).toBe(1);
    });

    it('extendLease renews the lease for its holder only, keeping other claimers off the job until the new end', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0, 30);
      expect(await ok(h().stores.jobs.extendLease(job.id, W2, at(1000)))).toBe(false);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(30));
      expect(await ok(h().stores.jobs.extendLease(job.id, W1, at(90)))).toBe(true);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(90));
      // Past the first lease end, the renewed lease still holds.
      expect(await claim(ALL_KINDS, W2, 60)).toEqual([]);
      expect(await claim(ALL_KINDS, W2, 89.999)).toEqual([]);
      // A lease that ran out still counts until someone else claims the job, as for complete.
      expect(await ok(h().stores.jobs.extendLease(job.id, W1, at(150)))).toBe(true);
      expect(await claim(ALL_KINDS, W2, 150, 60)).toEqual([claimed(job, 2)]);
      // Taken over: the old holder's heartbeat learns its lease is lost and changes nothing.
      expect(await ok(h().stores.jobs.extendLease(job.id, W1, at(1000)))).toBe(false);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(210));
      expect(await fails(h().stores.jobs.complete(job.id, W1))).toEqual(concurrentModification('job', job.id));
      expect(await ok(h().stores.jobs.complete(job.id, W2))).toBeUndefined();
    });

    it('extendLease answers false once the job was retried, buried, completed, or never existed', async () => {
      const [retried, buried, done] = [makeJob(TENANT_A, { runAt: at(-3) }), makeJob(TENANT_A, { runAt: at(-2) }), makeJob(TENANT_A, { runAt: at(-1) })];
      for (const j of [retried, buried, done]) await enqueue(j);
      expect(ids(await claim(ALL_KINDS, W1, 0, 30))).toEqual([retried.id, buried.id, done.id]);
      await ok(h().stores.jobs.retry(retried.id, W1, at(100), 'later'));
      await ok(h().stores.jobs.bury(buried.id, W1, 'dead'));
      expect(await ok(h().stores.jobs.complete(done.id, W1))).toBeUndefined();
      for (const id of [retried.id, buried.id, done.id, 'job_unknown']) expect(await ok(h().stores.jobs.extendLease(id, W1, at(60))), id).toBe(false);
      // The retried job kept its schedule: extending wrote nothing.
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(100));
    });

    it('annotate keeps notes that later claims hand out beside the untouched payload, whoever holds the job, buried or not', async () => {
      const job = makeJob(TENANT_A, { payload: { requestId: 'req_1', recipientId: 'rcp_1' }, dedupeKey: 'invite:rcp_1' });
      await enqueue(job);
      expect((await claim(ALL_KINDS, W1, 0, 30))[0]!.notes).toEqual({});
      // Not tied to the lease: a fact about the outside world, recorded by whoever learnt it.
      expect(await ok(h().stores.jobs.annotate(job.id, { mailAcceptedAt: at(1) }))).toBe(true);
      expect(await claim(ALL_KINDS, W2, 30, 30)).toEqual([claimed(job, 2, { notes: { mailAcceptedAt: at(1) } })]);
      await ok(h().stores.jobs.bury(job.id, W2, 'gave up'));
      // A later note of the same kind replaces the earlier one.
      expect(await ok(h().stores.jobs.annotate(job.id, { mailAcceptedAt: at(2) }))).toBe(true);
      const [listed] = await ok(h().stores.jobs.list({ limit: 10 }));
      expect([listed!.payload, listed!.notes]).toEqual([job.payload, { mailAcceptedAt: at(2) }]);
      // The dedupe key is untouched.
      expect(await enqueue(makeJob(TENANT_A, { dedupeKey: 'invite:rcp_1' }))).toBe(false);
    });

    it('annotate answers false for a job that is gone', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      await claim(ALL_KINDS, W1, 0);
      await ok(h().stores.jobs.complete(job.id, W1));
      expect(await ok(h().stores.jobs.annotate(job.id, { mailAcceptedAt: at(1) }))).toBe(false);
      expect(await ok(h().stores.jobs.annotate('job_unknown', { mailAcceptedAt: at(1) }))).toBe(false);
    });

    it('list shows every job with its burial and lease, soonest runAt first, filtered by kind, failure and request', async () => {
      const fresh = makeJob(TENANT_A, { kind: 'seal', runAt: at(-5), payload: { requestId: 'req_1' } });
      const running = makeJob(TENANT_B, { kind: 'mail.invite', runAt: at(-9), payload: { requestId: 'req_2', recipientId: 'rcp_2' } });
      const backingOff = makeJob(TENANT_A_LIVE, { kind: 'seal', runAt: at(-8), payload: { requestId: 'req_2' } });
      const buried = makeJob(TENANT_A, { kind: 'seal', runAt: at(-7), payload: { requestId: 'req_3' } });
      const webhook = makeJob(TENANT_A, { kind: 'webhook.deliver', runAt: at(-6), payload: { deliveryId: 'dlv_1' } });
      for (const j of [fresh, running, backingOff, buried, webhook]) await enqueue(j);
      // Claim the three oldest, then settle two of them.
      expect(ids(await claim(ALL_KINDS, W1, 0, 30, 3))).toEqual([running.id, backingOff.id, buried.id]);
      await ok(h().stores.jobs.retry(backingOff.id, W1, at(40), 'renderer: out of memory'));
      await ok(h().stores.jobs.bury(buried.id, W1, 'content of doc_1 is missing'));
      const q = (j: NewJob, over: Partial<Pick<QueuedJob, 'attempts' | 'buried' | 'lease' | 'lastError' | 'runAt'>> = {}): QueuedJob => ({ ...claimed(j, 0), buried: false, lease: null, ...over });
      const all: QueuedJob[] = [
        q(running, { attempts: 1, lease: { worker: W1, until: at(30) } }),
        q(buried, { attempts: 1, buried: true, lastError: 'content of doc_1 is missing' }),
        q(webhook),
        q(fresh),
        q(backingOff, { attempts: 1, runAt: at(40), lastError: 'renderer: out of memory' }),
      ];
      const list = (f: Omit<Parameters<Stores['jobs']['list']>[0], 'limit'>, limit = 100) => ok(h().stores.jobs.list({ ...f, limit }));
      expect(await list({})).toEqual(all);
      expect(await list({ kinds: [] })).toEqual(all);
      expect(ids(await list({}, 2))).toEqual([running.id, buried.id]);
      expect(ids(await list({ kinds: ['seal'] }))).toEqual([buried.id, fresh.id, backingOff.id]);
      expect(ids(await list({ kinds: ['seal', 'webhook.deliver'] }, 2))).toEqual([buried.id, webhook.id]);
      expect(ids(await list({ failedOnly: true }))).toEqual([buried.id, backingOff.id]);
      expect(ids(await list({ requestId: 'req_2' }))).toEqual([running.id, backingOff.id]);
      expect(ids(await list({ requestId: 'req_2', failedOnly: true, kinds: ['seal'] }))).toEqual([backingOff.id]);
      expect(await list({ requestId: 'req_9' })).toEqual([]);
      expect(await list({ ids: [webhook.id, 'job_unknown', running.id] })).toEqual([all[0], all[2]]);
      expect(ids(await list({ ids: [webhook.id, buried.id], kinds: ['seal'] }))).toEqual([buried.id]);
      expect(await list({ ids: [] })).toEqual([]);
      expect(await list({ requestId: "req_1' OR '1'='1" })).toEqual([]);
      await fails(h().stores.jobs.list({ limit: 0 }));
    });

    it('revive makes a buried or backing-off job due now with its attempts reset, keeping its error and dedupe key', async () => {
      const buried = makeJob(TENANT_A, { kind: 'seal', runAt: at(-2), dedupeKey: 'seal:req_1', payload: { requestId: 'req_1' } });
      const backingOff = makeJob(TENANT_A, { kind: 'seal', runAt: at(-1), payload: { requestId: 'req_2' } });
      for (const j of [buried, backingOff]) await enqueue(j);
      await claim(ALL_KINDS, W1, 0, 30);
      await ok(h().stores.jobs.bury(buried.id, W1, 'content missing'));
      await ok(h().stores.jobs.retry(backingOff.id, W1, at(3600), 'renderer crashed'));
      expect(await claim(ALL_KINDS, W2, 100)).toEqual([]);

      expect(await ok(h().stores.jobs.revive(buried.id, at(100)))).toBe(true);
      expect(await ok(h().stores.jobs.revive(backingOff.id, at(100)))).toBe(true);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(100));
      expect(await ok(h().stores.jobs.list({ failedOnly: true, limit: 10 }))).toEqual([
        { ...claimed(buried, 0, { runAt: at(100), lastError: 'content missing' }), buried: false, lease: null },
        { ...claimed(backingOff, 0, { runAt: at(100), lastError: 'renderer crashed' }), buried: false, lease: null },
      ]);
      expect(await claim(ALL_KINDS, W2, 100)).toEqual([
        claimed(buried, 1, { runAt: at(100), lastError: 'content missing' }),
        claimed(backingOff, 1, { runAt: at(100), lastError: 'renderer crashed' }),
      ]);
      expect(await enqueue(makeJob(TENANT_A, { dedupeKey: 'seal:req_1' }))).toBe(false);
    });

    it('revive leaves alone a job that never failed, one a worker is running, and an unknown one', async () => {
      const scheduled = makeJob(TENANT_A, { kind: 'expire', runAt: at(5000) });
      const running = makeJob(TENANT_A, { runAt: at(-1) });
      for (const j of [scheduled, running]) await enqueue(j);
      await claim(ALL_KINDS, W1, 0, 30);
      await ok(h().stores.jobs.retry(running.id, W1, at(10), 'SMTP 451'));
      expect(ids(await claim(ALL_KINDS, W2, 10, 30))).toEqual([running.id]);
      // An expiry scheduled for later must not run early: it has not failed, so it is not revived.
      expect(await ok(h().stores.jobs.revive(scheduled.id, at(20)))).toBe(false);
      // W2 is running it (its lease ends at 40): reviving would hand it to a second worker.
      expect(await ok(h().stores.jobs.revive(running.id, at(39.999)))).toBe(false);
      expect(await ok(h().stores.jobs.revive('job_unknown', at(20)))).toBe(false);
      expect(await ok(h().stores.jobs.nextRunAt(ALL_KINDS))).toBe(at(40));
      expect(await claim(ALL_KINDS, W1, 39.999)).toEqual([]);
      // Once W2's lease has ended (W2 died), the operator may revive it; W2 has then lost it.
      expect(await ok(h().stores.jobs.revive(running.id, at(40)))).toBe(true);
      expect(await ok(h().stores.jobs.extendLease(running.id, W2, at(100)))).toBe(false);
      expect(await fails(h().stores.jobs.complete(running.id, W2))).toEqual(concurrentModification('job', running.id));
      expect(await claim(ALL_KINDS, W1, 40)).toEqual([claimed(running, 1, { runAt: at(40), lastError: 'SMTP 451' })]);
    });

    describe('cancelWaiting', () => {
      /** A request's automatic reminder, due far later unless said otherwise. */
      const reminder = (dedupeKey: string | null, over: { readonly runAt?: string } = {}) =>
        makeJob(TENANT_A, { kind: 'remind.auto', payload: { requestId: 'req_1', round: 1 }, runAt: at(5000), dedupeKey, ...over });
      const remaining = async () => ids(await ok(h().stores.jobs.list({ limit: 100 }))).sort();

      it("deletes the tenant's waiting jobs whose dedupe key has the prefix, and leaves held, buried and other jobs", async () => {
        const waiting = reminder('remind.auto:req_1:1');
        const waitingToo = reminder('remind.auto:req_1:12', { runAt: at(7000) });
        const retried = reminder('remind.auto:req_1:2', { runAt: at(-2) });
        const held = reminder('remind.auto:req_1:3', { runAt: at(-3) });
        const buried = reminder('remind.auto:req_1:4', { runAt: at(-4) });
        // Keys next to the range: another request's whose id extends this one's, the range's end (';' follows ':'),
        // the prefix without its last character, and no key at all.
        const others = [reminder('remind.auto:req_10:1'), reminder('remind.auto:req_1;'), reminder('remind.auto:req_1'), reminder(null)];
        // The same prefix in the other mode and in another org (keys are unique across tenants, but the store checks).
        const elsewhere = [TENANT_A_LIVE, TENANT_B].map((t, i) =>
          makeJob(t, { kind: 'remind.auto', payload: { requestId: 'req_1', round: 1 }, runAt: at(5000), dedupeKey: `remind.auto:req_1:${20 + i}` }),
        );
        for (const j of [waiting, waitingToo, retried, held, buried, ...others, ...elsewhere]) expect(await enqueue(j)).toBe(true);
        expect(ids(await claim(ALL_KINDS, W1, 0, 30))).toEqual([buried.id, held.id, retried.id]);
        await ok(h().stores.jobs.bury(buried.id, W1, 'gave up'));
        await ok(h().stores.jobs.retry(retried.id, W1, at(3600), 'SMTP 451'));

        expect(await ok(h().stores.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:req_1:' }))).toBeUndefined();
        expect(await remaining()).toEqual([held.id, buried.id, ...ids(others), ...ids(elsewhere)].sort());
        // The worker that holds a job still completes it, and a deleted job's key is free again.
        expect(await ok(h().stores.jobs.complete(held.id, W1))).toBeUndefined();
        expect(await enqueue(reminder('remind.auto:req_1:1'))).toBe(true);
      });

      it('deletes by a whole key that key only, and refuses an empty or non-ASCII prefix without deleting anything', async () => {
        const expiry = (requestId: string) => makeJob(TENANT_A, { kind: 'expire', payload: { requestId }, runAt: at(5000), dedupeKey: `expire:${requestId}` });
        const [one, ten] = [expiry('req_1'), expiry('req_10')];
        const unicode = reminder('remind.auto:réq:1');
        for (const j of [one, ten, unicode]) await enqueue(j);
        await fails(h().stores.jobs.cancelWaiting(TENANT_A, { prefix: '' }));
        await fails(h().stores.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:ré' }));
        await fails(h().stores.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:\u0000' }));
        expect(await remaining()).toEqual([one.id, ten.id, unicode.id].sort());
        await ok(h().stores.jobs.cancelWaiting(TENANT_A, { key: 'expire:req_1' }));
        expect(await remaining()).toEqual([ten.id, unicode.id].sort());
      });

      it('leaves a job whose lease ran out, and one a stopping worker handed back: they still name their worker', async () => {
        const [ranOut, handedBack] = [reminder('remind.auto:req_1:1', { runAt: at(-2) }), reminder('remind.auto:req_1:2', { runAt: at(-1) })];
        for (const j of [ranOut, handedBack]) await enqueue(j);
        expect(ids(await claim(ALL_KINDS, W1, 0, 30))).toEqual([ranOut.id, handedBack.id]);
        expect(await ok(h().stores.jobs.extendLease(handedBack.id, W1, at(0)))).toBe(true);
        // Both leases have ended by now (30 s, and at once); no other worker has claimed either.
        await ok(h().stores.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:req_1:' }));
        expect(await remaining()).toEqual([ranOut.id, handedBack.id].sort());
        expect(await ok(h().stores.jobs.complete(ranOut.id, W1))).toBeUndefined();
      });

      it('in a transaction, commits with it or not at all, its writes sent unanswered or not', async () => {
        const job = reminder('remind.auto:req_1:1');
        await enqueue(job);
        expect(await fails(h().uow.transaction((tx) => pipe(tx.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:req_1:' }), TE.chainW(() => TE.left('abort' as const)))))).toBe('abort');
        expect(await remaining()).toEqual([job.id]);
        await ok(h().uow.transaction((tx) => tx.jobs.cancelWaiting(TENANT_A, { prefix: 'remind.auto:req_1:' }), { deferWrites: true }));
        expect(await remaining()).toEqual([]);
      });
    });

    it('a claim or complete inside a transaction that rolls back leaves the job as it was', async () => {
      const job = makeJob(TENANT_A);
      await enqueue(job);
      const thenAbort = <A>(work: TE.TaskEither<unknown, A>) => pipe(work, TE.chainW(() => TE.left('abort' as const)));
      expect(await fails(h().uow.transaction((tx) => thenAbort(tx.jobs.claim(ALL_KINDS, W1, at(0), at(60), 10))))).toBe('abort');
      expect(await claim(ALL_KINDS, W2, 0)).toEqual([claimed(job, 1)]);
      expect(await fails(h().uow.transaction((tx) => thenAbort(tx.jobs.complete(job.id, W2))))).toBe('abort');
      expect(await ok(h().stores.jobs.complete(job.id, W2))).toBeUndefined();
    });
      it('onNewJobs fires once a commit made a job claimable, with its kinds, never before it, nor for a rollback or a dedupe no-op', async ({ skip }) => {
      const { onNewJobs, stores, uow } = h();
      if (onNewJobs === undefined) return skip();
      /** What each call said: the kinds, sorted, or 'any'. */
      const calls: Array<readonly string[] | 'any'> = [];
      const stop = onNewJobs((kinds) => void calls.push(kinds === 'any' ? 'any' : [...kinds].sort()));
      const heard = () => calls.length;
      const seen: number[] = [];
      const job = makeJob(TENANT_A, { kind: 'seal', dedupeKey: 'seal:req_w', payload: { requestId: 'req_w' } });
      // In a transaction: not while its work runs (a woken worker would not see the job yet), right after its commit.
      await ok(
        uow.transaction((tx) =>
          pipe(
            tx.jobs.enqueue(job),
            TE.map(() => void seen.push(heard())),
          ),
        ),
      );
      expect(seen).toEqual([0]);
      expect(calls).toEqual([['seal']]);
      // Rolled back: nothing was made.
      expect(await fails(uow.transaction((tx) => pipe(tx.jobs.enqueue(makeJob(TENANT_A)), TE.chainW(() => TE.left('abort' as const)))))).toBe('abort');
      expect(heard()).toBe(1);
      // The dedupe key is taken: enqueue inserted nothing.
      expect(await ok(stores.jobs.enqueue(makeJob(TENANT_A, { dedupeKey: 'seal:req_w' })))).toBe(false);
      expect(heard()).toBe(1);
      // A write outside a transaction commits on its own, and is heard, with its kind.
      expect(await ok(stores.jobs.enqueue(makeJob(TENANT_A, { kind: 'expire', payload: { requestId: 'req_x' } })))).toBe(true);
      expect(calls[1]).toEqual(['expire']);
      // Several kinds in one transaction: one call that names them all.
      await ok(
        uow.transaction((tx) =>
          pipe(
            tx.jobs.enqueue(makeJob(TENANT_A, { kind: 'webhook.deliver', payload: { deliveryId: 'dlv_1' } })),
            TE.chain(() => tx.jobs.enqueue(makeJob(TENANT_A, { kind: 'mail.invite', payload: { requestId: 'req_y', recipientId: 'rcp_1' } }))),
          ),
        ),
      );
      expect(calls[2]).toEqual(['mail.invite', 'webhook.deliver']);
      // A revived job is new work too; revive goes by id, so the kind is not named.
      await claim(['seal'], W1, 0);
      await ok(stores.jobs.bury(job.id, W1, 'content missing'));
      expect(await ok(stores.jobs.revive(job.id, at(1)))).toBe(true);
      expect(calls[3]).toEqual('any');
      expect(heard()).toBe(4);
      stop();
      expect(await ok(stores.jobs.enqueue(makeJob(TENANT_A)))).toBe(true);
      expect(heard()).toBe(4);
    });
  });
