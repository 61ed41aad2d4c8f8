import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JobKind, NewJobKinds } from '@esig/core';
import { JOB_KINDS, concerns, createNewJobKinds, noticingNewJobs } from '@esig/core';
import { TENANT_A, at, createMemoryStores, makeJob, ok } from '@esig/testkit';

const noteArb = fc.oneof(fc.constantFrom<JobKind | 'any'>(...JOB_KINDS), fc.constant<'any'>('any'));
const kindsArb: fc.Arbitrary<NewJobKinds> = fc.oneof(fc.constant<'any'>('any'), fc.uniqueArray(fc.constantFrom(...JOB_KINDS)).map((ks) => new Set(ks)));

/** What a list of notes must come to: nothing, every kind unknown (`'any'`), or the kinds named. */
const expected = (notes: ReadonlyArray<JobKind | 'any'>): NewJobKinds | null =>
  notes.length === 0 ? null : notes.includes('any') ? 'any' : new Set(notes as JobKind[]);

describe('the kinds of new jobs a commit made', () => {
  it("are the kinds noted, or 'any' once a note named none, or nothing when none was noted", () => {
    fc.assert(
      fc.property(fc.array(noteArb, { maxLength: 20 }), (notes) => {
        const noted = createNewJobKinds();
        for (const n of notes) noted.note(n);
        expect(noted.taken()).toEqual(expected(notes));
      }),
    );
  });

  it('merged from the members of a group commit, are what one transaction noting them all would have', () => {
    fc.assert(
      fc.property(fc.array(fc.array(noteArb, { maxLength: 6 }), { maxLength: 6 }), (members) => {
        const group = createNewJobKinds();
        for (const notes of members) {
          const member = createNewJobKinds();
          for (const n of notes) member.note(n);
          group.merge(member.taken());
        }
        expect(group.taken()).toEqual(expected(members.flat()));
      }),
    );
  });

  it("concern a worker exactly when it serves one of them, and always when they are 'any'", () => {
    fc.assert(
      fc.property(kindsArb, fc.uniqueArray(fc.constantFrom(...JOB_KINDS)), (made, served) => {
        const s = new Set(served);
        expect(concerns(made, s)).toBe(made === 'any' || [...made].some((k) => s.has(k)));
      }),
    );
  });

  it('are noted by the job queue when an enqueue inserts one or a revive brings one back, not for a dedupe no-op', async () => {
    const { stores } = createMemoryStores();
    const notes: Array<JobKind | 'any'> = [];
    const jobs = noticingNewJobs(stores, (k) => void notes.push(k)).jobs;
    const seal = makeJob(TENANT_A, { kind: 'seal', dedupeKey: 'seal:req_1', payload: { requestId: 'req_1' } });
    expect(await ok(jobs.enqueue(seal))).toBe(true);
    expect(await ok(jobs.enqueue(makeJob(TENANT_A, { kind: 'seal', dedupeKey: 'seal:req_1', payload: { requestId: 'req_1' } })))).toBe(false);
    expect(await ok(jobs.enqueue(makeJob(TENANT_A, { kind: 'webhook.deliver', payload: { deliveryId: 'dlv_1' } })))).toBe(true);
    expect(notes).toEqual(['seal', 'webhook.deliver']);
    await ok(jobs.claim(['seal'], 'w', at(0), at(30), 1));
    await ok(jobs.bury(seal.id, 'w', 'content missing'));
    expect(await ok(jobs.revive(seal.id, at(1)))).toBe(true);
    // An unknown job is not revived, and not noted.
    expect(await ok(jobs.revive('job_unknown', at(1)))).toBe(false);
    expect(notes).toEqual(['seal', 'webhook.deliver', 'any']);
  });
});
