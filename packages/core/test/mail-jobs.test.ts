import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { JobOf, MailTransport, Tenant } from '@esig/core';
import {
  addField,
  addRecipient,
  createSignatureRequest,
  execute,
  handleCompletedMail,
  handleInvitationMail,
  handleSeal,
  inspectUpload,
  sendSignatureRequest,
  signAsRecipient,
  testMailboxTransport,
  uploadDocument,
} from '@esig/core';
import type { Harness } from './support.js';
import { harness, principal, right } from './support.js';
import { fakeRenderer } from './fakes.js';

const LEASE_MS = 60_000;

/**
 * One sent request with one signer, and mail jobs run the way the worker runs them: claim, handler, then
 * the handler's outcome committed with the job's completion, or not (the worker died, or the commit failed).
 * Mail goes to the test mailbox, a real transport over the same stores, so the mailbox counts what was sent.
 */
const setup = async () => {
  const h: Harness = harness();
  const run = execute({ uow: h.uow });
  let refuse: string | null = null;
  const mailbox = (tenant: Tenant): MailTransport => ({
    send: (m) => (refuse !== null ? TE.left({ _tag: 'MailFailure', permanent: false, detail: refuse }) : testMailboxTransport(h, tenant).send(m)),
  });
  const deps = { ...h, mail: mailbox, publicUrl: 'https://esig.test', renderer: fakeRenderer() };
  const p = principal(['*']);
  const pdf = await right(inspectUpload(deps)(p, Uint8Array.from([37, 80, 68, 70])));
  const doc = await right(run(uploadDocument(deps)(p, { name: 'lease.pdf', pdf })));
  const req = await right(run(createSignatureRequest(deps)(p, { title: 'Lease', documentIds: [doc.id] })));
  const signer = await right(run(addRecipient(deps)(p, req.id, { email: 'ana@example.com', firstName: 'Ana', lastName: 'M' })));
  await right(run(addField(deps)(p, req.id, { documentId: doc.id, recipientId: signer.id, type: 'signature', page: 1, x: 1, y: 1, width: 10, height: 10 })));
  await right(run(sendSignatureRequest(deps)(p, req.id)));

  const claim = async <K extends 'mail.invite' | 'mail.completed' | 'seal.complete'>(kind: K, worker: string): Promise<JobOf<K>> => {
    const now = h.clock.now();
    const [job] = await right(h.stores.jobs.claim([kind], worker, now.toISOString(), new Date(now.getTime() + LEASE_MS).toISOString(), 1));
    if (!job) throw new Error(`no ${kind} job to claim`);
    return job as JobOf<K>;
  };
  /** Runs a claimed job's handler; with `commit`, records its outcome and completes the job as the worker does. */
  const runJob = async (job: JobOf<'mail.invite' | 'mail.completed'>, worker: string, commit: boolean): Promise<E.Either<unknown, unknown>> => {
    const outcome = await (job.kind === 'mail.invite' ? handleInvitationMail(deps)(job) : handleCompletedMail(deps)(job))();
    if (E.isLeft(outcome) || !commit) return outcome;
    return h.uow.transaction((tx) => pipe(outcome.right(tx), TE.chainW(() => tx.jobs.complete(job.id, worker))))();
  };
  /** The worker died: its lease runs out and the job is due again. */
  const leaseRunsOut = () => h.clock.advance(LEASE_MS);
  const sent = async () => (await right(h.stores.testMailbox.list(p.tenant, { limit: 100, order: 'asc', after: null, filter: {} }))).items;
  const evidence = async () => (await right(h.stores.evidence.listForRequest(p.tenant, req.id))).map((e) => e.action);
  return { h, p, req, signer, run, deps, claim, runJob, leaseRunsOut, sent, evidence, refuse: (why: string | null) => (refuse = why) };
};

describe('mail jobs send once per job', () => {
  it('an invitation accepted by the server is not sent again when its outcome was not recorded; the next run only records it', async () => {
    const s = await setup();
    const first = await s.claim('mail.invite', 'w1');
    expect(first.notes.mailAcceptedAt).toBeUndefined();
    // w1 sends, then dies before recording the outcome.
    const acceptedAt = s.h.clock.now().toISOString();
    expect(E.isRight(await s.runJob(first, 'w1', false))).toBe(true);
    expect((await s.sent()).map((m) => m.messageId)).toEqual([`<${first.id}@esig>`]);
    expect(await s.evidence()).not.toContain('notified');

    s.leaseRunsOut();
    const again = await s.claim('mail.invite', 'w2');
    expect(again).toMatchObject({ id: first.id, attempts: 2 });
    expect(again.notes.mailAcceptedAt).toBe(acceptedAt);
    expect(E.isRight(await s.runJob(again, 'w2', true))).toBe(true);
    // Still the one message; the outcome is now recorded, once.
    expect(await s.sent()).toHaveLength(1);
    expect((await s.evidence()).filter((a) => a === 'notified')).toHaveLength(1);
    const r = await right(s.h.stores.signatureRequests.findById(s.p.tenant, s.req.id));
    expect(r!.recipients[0]!.status).toBe('NOTIFIED');
    expect(await right(s.h.stores.jobs.list({ kinds: ['mail.invite'], limit: 10 }))).toEqual([]);
  });

  it('a send the server refused leaves no note, so the next run sends', async () => {
    const s = await setup();
    s.refuse('421 try again later');
    const first = await s.claim('mail.invite', 'w1');
    const failed = await s.runJob(first, 'w1', true);
    expect(failed).toEqual(E.left({ _tag: 'JobFailure', permanent: false, detail: '421 try again later' }));
    await right(s.h.stores.jobs.retry(first.id, 'w1', s.h.clock.now().toISOString(), '421 try again later'));
    s.refuse(null);
    const again = await s.claim('mail.invite', 'w1');
    expect(again.notes.mailAcceptedAt).toBeUndefined();
    expect(E.isRight(await s.runJob(again, 'w1', true))).toBe(true);
    expect(await s.sent()).toHaveLength(1);
  });

  it('a completed notice is sent once however often its job runs before it completes', async () => {
    const s = await setup();
    await s.runJob(await s.claim('mail.invite', 'w1'), 'w1', true);
    const [mail] = await s.sent();
    const token = /sign\/([A-Za-z0-9]{43})/.exec(mail!.text)![1]!;
    await right(signAsRecipient(s.deps)(token, { values: {}, signature: { kind: 'typed', value: 'Ana M' } }, { ip: null, userAgent: null }));
    // The seal makes the request COMPLETED and enqueues the notice.
    const seal = await s.claim('seal.complete', 'w0');
    const sealing = await right(handleSeal(s.deps)(seal));
    await right(s.h.uow.transaction((tx) => pipe(sealing(tx), TE.chainW(() => tx.jobs.complete(seal.id, 'w0')))));
    for (const worker of ['w1', 'w2', 'w3']) {
      await s.runJob(await s.claim('mail.completed', worker), worker, false);
      s.leaseRunsOut();
    }
    await s.runJob(await s.claim('mail.completed', 'w4'), 'w4', true);
    expect((await s.sent()).filter((m) => /Completed/i.test(m.subject))).toHaveLength(1);
    expect(await right(s.h.stores.jobs.list({ kinds: ['mail.completed'], limit: 10 }))).toEqual([]);
  });
});
