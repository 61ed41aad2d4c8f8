import { describe, expect, it } from 'vitest';
import type { JobWork, NewJob, QueuedJob } from '@esig/core';
import { jobState, listJobs, retryJobs } from '@esig/core';
import { harness, right } from './support.js';

const at = (h: ReturnType<typeof harness>, deltaMs = 0) => new Date(h.clock.now().getTime() + deltaMs).toISOString();

/** Jobs in every state an operator meets, for one request and another. */
const setup = async () => {
  const h = harness();
  const job = (over: Partial<Pick<NewJob, 'runAt'>> & Partial<JobWork> = {}): NewJob => ({
    id: h.ids.next('job'),
    ...(over.kind === undefined ? { kind: 'seal', payload: over.payload ?? { requestId: 'req_1' } } : over) as JobWork,
    orgId: 'org_1',
    mode: 'live',
    runAt: over.runAt ?? at(h),
    dedupeKey: null,
    createdAt: at(h),
  });
  const buried = job({});
  const backingOff = job({ kind: 'mail.completed', payload: { requestId: 'req_1', recipientId: 'rcp_1' } });
  const running = job({ kind: 'mail.invite', payload: { requestId: 'req_1', recipientId: 'rcp_2' } });
  const scheduled = job({ kind: 'expire', payload: { requestId: 'req_1' }, runAt: at(h, 86_400_000) });
  const otherRequest = job({ payload: { requestId: 'req_2' } });
  for (const j of [buried, backingOff, running, scheduled, otherRequest]) await right(h.stores.jobs.enqueue(j));
  const claim = (ids: readonly string[], worker: string) =>
    right(h.stores.jobs.claim(['seal', 'mail.completed', 'mail.invite'], worker, at(h), at(h, 60_000), 10)).then((js) => js.filter((j) => ids.includes(j.id)));
  await claim([buried.id, backingOff.id, running.id, otherRequest.id], 'w1');
  await right(h.stores.jobs.bury(buried.id, 'w1', 'content of doc_1 is missing'));
  await right(h.stores.jobs.retry(backingOff.id, 'w1', at(h, 3_600_000), '421 mailbox busy'));
  await right(h.stores.jobs.bury(otherRequest.id, 'w1', 'renderer crashed'));
  // `running` failed once, was retried and is being worked on again by w2.
  await right(h.stores.jobs.retry(running.id, 'w1', at(h), 'timeout'));
  await claim([running.id], 'w2');
  h.clock.advance(1_000);
  return { h, buried, backingOff, running, scheduled, otherRequest };
};

describe('operator job commands', () => {
  it('list shows where each job stands', async () => {
    const s = await setup();
    const jobs = await right(listJobs(s.h)({ limit: 100 }));
    const now = s.h.clock.now().toISOString();
    const states = Object.fromEntries(jobs.map((j: QueuedJob) => [j.id, jobState(j, now)]));
    expect(states).toEqual({
      [s.buried.id]: 'buried',
      [s.backingOff.id]: 'backing-off',
      [s.running.id]: 'running',
      [s.scheduled.id]: 'scheduled',
      [s.otherRequest.id]: 'buried',
    });
    // A lease that ran out (its worker died) and a revived job are due.
    s.h.clock.advance(60_000);
    expect(jobState((await right(listJobs(s.h)({ ids: [s.running.id], limit: 1 })))[0]!, s.h.clock.now().toISOString())).toBe('due');
    // The limit is kept within 1..1000 whatever the caller passes.
    expect(await right(listJobs(s.h)({ limit: 0 }))).toHaveLength(1);
    expect(await right(listJobs(s.h)({ limit: 5000 }))).toHaveLength(5);
  });

  it('retry by request revives its failed jobs, buried or backing off, and leaves the running one and other requests alone', async () => {
    const s = await setup();
    const done = await right(retryJobs(s.h)({ jobIds: [], requestId: 'req_1' }));
    expect(Object.fromEntries(done.map((r) => [r.id, r.outcome]))).toEqual({
      [s.buried.id]: 'revived',
      [s.backingOff.id]: 'revived',
      [s.running.id]: 'running',
    });
    const now = s.h.clock.now().toISOString();
    const after = await right(listJobs(s.h)({ limit: 100 }));
    const byId = new Map(after.map((j) => [j.id, j]));
    for (const id of [s.buried.id, s.backingOff.id]) expect(byId.get(id)).toMatchObject({ runAt: now, attempts: 0, buried: false, lease: null });
    expect(byId.get(s.running.id)).toMatchObject({ attempts: 2, lease: { worker: 'w2' } });
    expect(byId.get(s.otherRequest.id)).toMatchObject({ buried: true });
    expect(byId.get(s.scheduled.id)!.runAt).not.toBe(now);
  });

  it('retry by id says why it leaves a job alone: unknown, running, or never failed', async () => {
    const s = await setup();
    const done = await right(retryJobs(s.h)({ jobIds: [s.scheduled.id, 'job_gone', s.running.id, s.otherRequest.id, s.otherRequest.id], requestId: null }));
    expect(done).toHaveLength(4);
    expect(Object.fromEntries(done.map((r) => [r.id, r.outcome]))).toEqual({
      [s.running.id]: 'running',
      [s.scheduled.id]: 'not-failed',
      [s.otherRequest.id]: 'revived',
      job_gone: 'unknown',
    });
    // An expiry that has not failed keeps its time: running it early would end the request too soon.
    expect((await right(listJobs(s.h)({ ids: [s.scheduled.id], limit: 1 })))[0]!.runAt).toBe(s.scheduled.runAt);
  });
});
