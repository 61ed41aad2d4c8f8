import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { DocumentContentStore, JobKind, JobOf, JobPayloads, JobWorkOf, StagedContent, Tenant } from '@esig/core';
import { cancelSignatureRequest, declineAsRecipient, getCertificateData, getSigningFinishedDocument, handleAutoRemind, handleCompletedMail, handleExpire, handleInvitationMail, handleSeal, openSigningLink, remindSignatureRequest, runClaimedJob, signAsRecipient, stagedContent, storeFailure } from '@esig/core';
import { certificateKey, completedEventId, finishedKey } from '@esig/core/internal';
import { TENANT, baseRequest, documentRow, iso, recipient, T0 } from './arbitraries.js';
import { certificateIn, linkIn } from './fakes.js';
import { left, right } from './support.js';
import type { Sent, World } from './world.js';
import { CLIENT, DAY, PUBLIC_URL, claim, commit, eventsOf, evidenceOf, requestNow, runJob, runOk, sentRequest, signInput, WORKER, world } from './world.js';

const at = (w: World) => w.h.clock.now().toISOString();
const sign = (w: World, s: Sent, i: number) => right(signAsRecipient(w.deps)(s.signers[i]!.token, signInput(s.signers[i]!), CLIENT));
const cancel = (w: World, s: Sent) => right(w.run(cancelSignatureRequest(w.deps)(s.p, s.req.id)));
/** The request, its tenant's events and its evidence: what a job that records nothing leaves as it was. */
const records = async (w: World, s: Sent) => ({
  request: await requestNow(w, s.p.tenant, s.req.id),
  events: await eventsOf(w, s.p.tenant),
  evidence: await evidenceOf(w, s.p.tenant, s.req.id),
});
/** A job as a worker could hold it: stale, or made up by an operator. */
const manualJob = <K extends JobKind>(kind: K, tenant: Tenant, payload: JobPayloads[K]): JobOf<K> => ({
  id: `job_manual_${kind}`,
  // TypeScript does not pair a generic kind with its payload by itself.
  ...({ kind, payload } as JobWorkOf<K>),
  orgId: tenant.orgId,
  mode: tenant.mode,
  notes: {},
  runAt: iso(T0),
  attempts: 1,
  dedupeKey: null,
  createdAt: iso(T0),
  lastError: null,
});
/** Signs every signer (none identifies), then seals as the worker would. */
const completeAndSeal = async (w: World, s: Sent) => {
  for (const i of s.signers.keys()) await sign(w, s, i);
  for (const job of await claim(w, ['seal.complete'])) await runOk(w, handleSeal(w.deps), job);
};

describe('handleInvitationMail', () => {
  it('mails the signer a link that opens their view, then records NOTIFIED, signer.notified and evidence', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const jobs = await claim(w, ['mail.invite']);
    expect(jobs.map((j) => j.payload)).toEqual(s.signers.map((x) => ({ requestId: s.req.id, recipientId: x.rcp.id })));
    const [job] = jobs;
    await runOk(w, handleInvitationMail(w.deps), job!);
    expect(w.mail.sent).toHaveLength(1);
    const { tenant, message } = w.mail.sent[0]!;
    expect(tenant).toEqual(s.p.tenant);
    expect(message).toMatchObject({ to: 'signer1@example.com', subject: '[TEST] Please sign: Lease', messageId: `<${job!.id}@esig>` });
    const now = at(w);
    const stored = await requestNow(w, s.p.tenant, s.req.id);
    expect(stored.recipients.map((r) => r.status)).toEqual(['NOTIFIED', 'PENDING']);
    expect((await eventsOf(w, s.p.tenant, 'signer.notified')).map((e) => e.data)).toEqual([
      { request_id: s.req.id, recipient_id: s.signers[0]!.rcp.id, kind: 'invitation', notified_at: now },
    ]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'notified')).toEqual([
      expect.objectContaining({ recipientId: s.signers[0]!.rcp.id, at: now, ip: null, userAgent: null }),
    ]);
    // The link is stored as its hash only, and opens this signer's view.
    const { token } = linkIn(message, PUBLIC_URL);
    expect(await right(w.h.stores.signingLinks.findByTokenHash(w.h.crypto.sha256Hex(token)))).toMatchObject({ requestId: s.req.id, recipientId: s.signers[0]!.rcp.id });
    expect(await right(w.h.stores.signingLinks.findByTokenHash(token))).toBeNull();
    const view = await right(openSigningLink(w.deps)(token, CLIENT));
    expect(view.recipient.id).toBe(s.signers[0]!.rcp.id);
  });

  it('mails nothing once the deadline has passed, even before the expiry job has run', async () => {
    const w = world();
    const s = await sentRequest(w, { expiresAt: new Date(Date.parse(at(w)) + 3_600_000).toISOString() });
    const [job] = await claim(w, ['mail.invite']);
    w.h.clock.advance(3_600_000);
    const before = await records(w, s);
    await runOk(w, handleInvitationMail(w.deps), job!);
    expect(w.mail.sent).toEqual([]);
    expect(await records(w, s)).toEqual(before);
  });

  it('a reminder is mailed as a reminder and recorded as reminded, never moving the recipient back', async () => {
    const w = world();
    const s = await sentRequest(w);
    await right(openSigningLink(w.deps)(s.signers[0]!.token, CLIENT));
    await right(w.run(remindSignatureRequest(w.deps)(s.p, s.req.id)));
    const [job] = await claim(w, ['mail.remind']);
    await runOk(w, handleInvitationMail(w.deps), job!);
    expect(w.mail.sent.map((m) => m.message.subject)).toEqual(['[TEST] Reminder: please sign: Lease']);
    expect((await requestNow(w, s.p.tenant, s.req.id)).recipients[0]!.status).toBe('OPENED');
    expect((await eventsOf(w, s.p.tenant, 'signer.notified')).map((e) => e.data.kind)).toEqual(['reminder']);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).map((e) => e.action)).toContain('reminded');
  });

  it('mails nothing and records nothing for a recipient who signed, a request that ended or no longer exists', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [first, second] = await claim(w, ['mail.invite']);
    await sign(w, s, 0);
    const signed = await records(w, s);
    await runOk(w, handleInvitationMail(w.deps), first!);
    expect(await records(w, s)).toEqual(signed);
    await cancel(w, s);
    const cancelled = await records(w, s);
    await runOk(w, handleInvitationMail(w.deps), second!);
    expect(await records(w, s)).toEqual(cancelled);
    for (const job of [
      manualJob('mail.invite', s.p.tenant, { requestId: 'req_gone', recipientId: s.signers[1]!.rcp.id }),
      manualJob('mail.invite', { ...s.p.tenant, mode: 'live' }, { requestId: s.req.id, recipientId: s.signers[1]!.rcp.id }),
    ])
      expect(E.isRight(await commit(w, await right(handleInvitationMail(w.deps)(job))))).toBe(true);
    expect(w.mail.attempts).toEqual([]);
    expect(await records(w, s)).toEqual(cancelled);
  });

  it('a mail failure is a JobFailure, permanent or not as the transport said, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [job] = await claim(w, ['mail.invite']);
    const before = await records(w, s);
    for (const permanent of [false, true]) {
      w.mail.fail(permanent, `${permanent ? 550 : 451} from the server`);
      const r = await runJob(w, handleInvitationMail(w.deps), job!);
      expect(r).toEqual(E.left({ _tag: 'JobFailure', permanent, detail: `${permanent ? 550 : 451} from the server` }));
      expect(await records(w, s)).toEqual(before);
    }
    w.mail.recover();
    await runOk(w, handleInvitationMail(w.deps), job!);
    expect((await requestNow(w, s.p.tenant, s.req.id)).recipients[0]!.status).toBe('NOTIFIED');
    // Every attempt carried the job's Message-ID, so a repeat is recognisable as the same message.
    expect(new Set(w.mail.attempts.map((a) => a.message.messageId))).toEqual(new Set([`<${job!.id}@esig>`]));
  });

  it('records nothing when the request ended while the mail was out', async () => {
    const w = world();
    const s = await sentRequest(w);
    const [job] = await claim(w, ['mail.invite']);
    const command = await right(handleInvitationMail(w.deps)(job!));
    expect(w.mail.sent).toHaveLength(1);
    await cancel(w, s);
    const cancelled = await records(w, s);
    expect(E.isRight(await commit(w, command))).toBe(true);
    expect(await records(w, s)).toEqual(cancelled);
  });
});

describe('handleCompletedMail', () => {
  it('mails every recipient, signers and cc alike, a link to the finished document, and records nothing', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], cc: 1 });
    await completeAndSeal(w, s);
    const everyone = [...s.signers.map((x) => x.rcp), ...s.cc];
    const jobs = await claim(w, ['mail.completed']);
    expect(jobs.map((j) => [j.payload.recipientId, j.dedupeKey])).toEqual(everyone.map((r) => [r.id, `completed:${r.id}`]));
    const before = await records(w, s);
    for (const job of jobs) await runOk(w, handleCompletedMail(w.deps), job);
    expect(await records(w, s)).toEqual(before);
    expect(w.mail.sent.map((m) => [m.message.to, m.message.subject, m.message.messageId])).toEqual(
      everyone.map((r, i) => [r.email, '[TEST] Completed: Lease', `<${jobs[i]!.id}@esig>`]),
    );
    const finished = await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id)));
    for (const m of w.mail.sent) expect((await right(getSigningFinishedDocument(w.deps)(linkIn(m.message, PUBLIC_URL).token))).bytes).toEqual(finished);
  });

  it('mails nothing for a request that is not completed, or a recipient who is not in it', async () => {
    const w = world();
    const open = await sentRequest(w);
    const done = await sentRequest(w);
    await completeAndSeal(w, done);
    for (const job of [
      manualJob('mail.completed', open.p.tenant, { requestId: open.req.id, recipientId: open.signers[0]!.rcp.id }),
      manualJob('mail.completed', done.p.tenant, { requestId: done.req.id, recipientId: open.signers[0]!.rcp.id }),
      manualJob('mail.completed', { orgId: 'org_B', mode: 'test' }, { requestId: done.req.id, recipientId: done.signers[0]!.rcp.id }),
    ])
      expect(E.isRight(await commit(w, await right(handleCompletedMail(w.deps)(job))))).toBe(true);
    expect(w.mail.attempts).toEqual([]);
  });

  it('a mail failure is a JobFailure, permanent or not as the transport said', async () => {
    const w = world();
    const s = await sentRequest(w);
    await completeAndSeal(w, s);
    const [job] = await claim(w, ['mail.completed']);
    for (const permanent of [true, false]) {
      w.mail.fail(permanent, 'refused');
      expect(await runJob(w, handleCompletedMail(w.deps), job!)).toEqual(E.left({ _tag: 'JobFailure', permanent, detail: 'refused' }));
    }
  });
});

describe('handleSeal', () => {
  it('stores the finished PDF and the certificate under their content keys, marks the request sealed and its documents COMPLETED', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], cc: 1, documents: 2 });
    for (const i of s.signers.keys()) await sign(w, s, i);
    const completed = await requestNow(w, s.p.tenant, s.req.id);
    const [job] = await claim(w, ['seal.complete']);
    w.h.clock.advance(30_000);
    await runOk(w, handleSeal(w.deps), job!);

    // The renderer was given every document as uploaded, every field as signed, and each signature.
    expect(w.renderer.finished).toHaveLength(1);
    const { input, output } = w.renderer.finished[0]!;
    expect(input).toEqual({
      documents: s.docs.map((d) => ({ id: d.doc.id, bytes: d.bytes })),
      fields: completed.fields,
      signatures: Object.fromEntries(completed.recipients.filter((r) => r.signature).map((r) => [r.id, r.signature])),
      testMode: true,
    });
    const finished = await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id)));
    const certificate = await right(w.h.stores.documentContents.get(s.p.tenant, certificateKey(s.req.id)));
    expect(finished).toEqual(output);
    expect(certificate).toEqual(w.renderer.certificates[0]!.output);
    const digest = w.h.crypto.sha256Hex(finished!);
    const sealed = await requestNow(w, s.p.tenant, s.req.id);
    // Only now COMPLETED: completed at the last signature, under a new certificate id.
    const lastSignature = completed.recipients.flatMap((r) => (r.signedAt === null ? [] : [r.signedAt])).sort().at(-1);
    expect(sealed.certificateId).toMatch(/^coc_[0-9A-Z]{26}$/);
    expect(sealed).toEqual({ ...completed, status: 'COMPLETED', completedAt: lastSignature, certificateId: sealed.certificateId, finishedSha256: digest, version: completed.version + 1 });
    for (const d of s.docs) expect((await right(w.h.stores.documents.findById(s.p.tenant, d.doc.id)))!.status).toBe('COMPLETED');
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'sealed')).toEqual([
      expect.objectContaining({ at: at(w), recipientId: null, details: { finished_sha256: digest } }),
    ]);

    // The certificate states the request, the finished document's digest and the whole evidence trail.
    const data = certificateIn(certificate!);
    expect(data).toMatchObject({
      certificateId: sealed.certificateId,
      completedAt: lastSignature,
      requestId: s.req.id,
      testMode: true,
      requestedSignatureLevel: 'SES',
      finishedDocumentSha256: digest,
      documents: s.docs.map((d) => ({ id: d.doc.id, name: d.doc.name, pageCount: d.doc.pageCount, sha256: w.h.crypto.sha256Hex(d.bytes) })),
    });
    expect(data.events.filter((e) => e.action === 'signed').map((e) => [e.recipientId, e.ip, e.userAgent])).toEqual(
      s.signers.map((x) => [x.rcp.id, CLIENT.ip, CLIENT.userAgent]),
    );
    expect(w.renderer.certificates[0]!.testMode).toBe(true);
  });

  it('releases request.completed with exactly the spec’s data, and a completed notice for every recipient', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], cc: 2, documents: 2 });
    for (const i of s.signers.keys()) await sign(w, s, i);
    const [job] = await claim(w, ['seal.complete']);
    await runOk(w, handleSeal(w.deps), job!);
    const completed = await requestNow(w, s.p.tenant, s.req.id);
    expect(completed.status).toBe('COMPLETED');
    const events = await eventsOf(w, s.p.tenant, 'request.completed');
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ id: completedEventId(s.req.id), createdAt: at(w), redeliveryOf: null });
    expect(events[0]!.id).toBe(`request.completed:${s.req.id}`);
    expect(events[0]!.data).toEqual({
      request_id: s.req.id,
      status: 'COMPLETED',
      completed_at: completed.completedAt,
      requested_signature_level: 'SES',
      documents: s.docs.map((d) => ({ document_id: d.doc.id, sha256: w.h.crypto.sha256Hex(d.bytes), page_count: d.doc.pageCount })),
      document_sha256: w.h.crypto.sha256Hex(w.renderer.finished[0]!.output),
      certificate: { certificate_id: completed.certificateId },
    });
    // Identifiers, states, digests and times only: no names, addresses or values.
    expect(JSON.stringify(events[0]!.data)).not.toMatch(/@|Signer|Test|High Street|Ada/);
    expect((await claim(w, ['mail.completed'])).map((j) => j.payload.recipientId)).toEqual([...s.signers.map((x) => x.rcp.id), ...s.cc.map((r) => r.id)]);
  });

  it('seals a request an older release stored COMPLETED before its seal, keeping its certificate id and time', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}] });
    for (const i of s.signers.keys()) await sign(w, s, i);
    const signed = await requestNow(w, s.p.tenant, s.req.id);
    const legacy = { ...signed, status: 'COMPLETED' as const, certificateId: 'coc_01JD0000000000000000000000', completedAt: '2024-12-31T23:59:59.000Z', version: signed.version + 1 };
    await right(w.h.uow.transaction((tx) => tx.signatureRequests.update(legacy)));
    // Such a release queued the job as `seal`.
    const [job] = await claim(w, ['seal.complete']);
    await runOk(w, handleSeal(w.deps), { ...job!, kind: 'seal' as const });
    const sealed = await requestNow(w, s.p.tenant, s.req.id);
    expect(sealed).toMatchObject({ status: 'COMPLETED', certificateId: legacy.certificateId, completedAt: legacy.completedAt, finishedSha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    expect(certificateIn(w.renderer.certificates[0]!.output)).toMatchObject({ certificateId: legacy.certificateId, completedAt: legacy.completedAt });
    expect((await eventsOf(w, s.p.tenant, 'request.completed')).map((e) => e.data)).toEqual([
      expect.objectContaining({ completed_at: legacy.completedAt, certificate: { certificate_id: legacy.certificateId } }),
    ]);
  });

  it('an invitation mailed just before the last signature records nothing once every signer has signed', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}] });
    const invites = await claim(w, ['mail.invite']);
    const mailed = await right(handleInvitationMail(w.deps)(invites[0]! as JobOf<'mail.invite'>));
    for (const i of s.signers.keys()) await sign(w, s, i);
    const before = await evidenceOf(w, s.p.tenant, s.req.id);
    expect(E.isRight(await commit(w, mailed))).toBe(true);
    expect(await evidenceOf(w, s.p.tenant, s.req.id)).toEqual(before);
    expect(await eventsOf(w, s.p.tenant, 'signer.notified')).toEqual([]);
  });

  it('evidence added while the certificate renders fails the commit as a concurrent change; the next run renders it in', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}] });
    for (const i of s.signers.keys()) await sign(w, s, i);
    const [job] = await claim(w, ['seal.complete']);
    const rendered = await right(handleSeal(w.deps)(job!));
    w.h.clock.advance(1000);
    const late = { id: w.h.ids.next('evt'), orgId: s.p.tenant.orgId, mode: s.p.tenant.mode, requestId: s.req.id, recipientId: s.signers[0]!.rcp.id, action: 'opened' as const, at: at(w), ip: null, userAgent: null, details: {} };
    await right(w.h.uow.transaction((tx) => tx.evidence.append(late)));
    expect(await commit(w, rendered)).toMatchObject(E.left({ _tag: 'ConcurrentModification', resource: 'evidence' }));
    expect((await requestNow(w, s.p.tenant, s.req.id)).status).toBe('SENT');
    await runOk(w, handleSeal(w.deps), job!);
    expect((await requestNow(w, s.p.tenant, s.req.id)).status).toBe('COMPLETED');
    // The certificate PDF holds what the JSON certificate (rebuilt from the stored evidence) holds.
    const pdf = certificateIn(w.renderer.certificates.at(-1)!.output);
    const json = await right(getCertificateData(w.deps)(s.p, s.req.id));
    expect(pdf.events.map((e) => [e.action, e.at])).toContainEqual(['opened', late.at]);
    expect(pdf.events).toEqual(json.events);
  });

  it('seals once even when run twice, by two workers side by side or one after the other', async () => {
    const w = world();
    const s = await sentRequest(w, { signers: [{}, {}], cc: 1 });
    for (const i of s.signers.keys()) await sign(w, s, i);
    const [job] = await claim(w, ['seal.complete']);
    const handler = handleSeal(w.deps);
    // Both render before either commits.
    const first = await right(handler(job!));
    const second = await right(handler(job!));
    expect(w.renderer.finished).toHaveLength(2);
    expect(E.isRight(await commit(w, first))).toBe(true);
    const once = await records(w, s);
    expect(E.isRight(await commit(w, second))).toBe(true);
    expect(await records(w, s)).toEqual(once);
    // Run again after the commit: nothing is rendered, nothing recorded.
    await runOk(w, handler, job!);
    expect(w.renderer.finished).toHaveLength(2);
    expect(await records(w, s)).toEqual(once);
    expect(once.events.filter((e) => e.type === 'request.completed')).toHaveLength(1);
    expect(once.evidence.filter((e) => e.action === 'sealed')).toHaveLength(1);
    expect(once.request.finishedSha256).toBe(w.h.crypto.sha256Hex((await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id))))!));
    expect(await claim(w, ['mail.completed'])).toHaveLength(3);
  });

  it('a renderer failure is a JobFailure and records nothing; once the renderer is back the retry seals', async () => {
    const w = world();
    const s = await sentRequest(w);
    await sign(w, s, 0);
    const [job] = await claim(w, ['seal.complete']);
    const before = await records(w, s);
    for (const only of ['finished', 'certificate'] as const) {
      w.renderer.fail(`${only}: font missing`, only);
      expect(await runJob(w, handleSeal(w.deps), job!)).toEqual(E.left({ _tag: 'JobFailure', permanent: false, detail: `${only}: font missing` }));
      expect(await records(w, s)).toEqual(before);
      expect(await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id)))).toBeNull();
      expect(await right(w.h.stores.documentContents.get(s.p.tenant, certificateKey(s.req.id)))).toBeNull();
      expect(await claim(w, ['mail.completed'])).toEqual([]);
    }
    w.renderer.fail(null);
    await runOk(w, handleSeal(w.deps), job!);
    expect((await requestNow(w, s.p.tenant, s.req.id)).finishedSha256).not.toBeNull();
  });

  it('a document whose bytes are missing is a permanent JobFailure, found before anything is rendered', async () => {
    const w = world();
    const req = baseRequest({
      status: 'COMPLETED',
      sentAt: iso(T0),
      completedAt: iso(T0),
      certificateId: 'coc_1',
      recipients: [recipient('rcp_1', 'signer', 1, 'SIGNED')],
    });
    await right(w.h.uow.transaction((tx) => tx.documents.insert(documentRow('doc_0', iso(T0), TENANT, 'PENDING'))));
    await right(w.h.uow.transaction((tx) => tx.signatureRequests.insert(req)));
    const r = await handleSeal(w.deps)(manualJob('seal', TENANT, { requestId: req.id }))();
    expect(r).toEqual(E.left({ _tag: 'JobFailure', permanent: true, detail: 'content of doc_0 is missing' }));
    expect(w.renderer.finished).toEqual([]);
  });

  it('renders nothing for a request that is not completed, or no longer exists', async () => {
    const w = world();
    const s = await sentRequest(w);
    const before = await records(w, s);
    for (const job of [manualJob('seal', s.p.tenant, { requestId: s.req.id }), manualJob('seal', s.p.tenant, { requestId: 'req_gone' }), manualJob('seal', { orgId: 'org_B', mode: 'test' }, { requestId: s.req.id })])
      expect(E.isRight(await commit(w, await right(handleSeal(w.deps)(job))))).toBe(true);
    expect(w.renderer.finished).toEqual([]);
    expect(await records(w, s)).toEqual(before);
  });
  // Both artifacts are staged ahead of the transaction (on SQLite, written in pieces): what a seal staged and
  // did not commit must be discarded, or it stays on disk until the hourly purge.
  describe('discards what it staged but did not commit', () => {
    /** The world's content store, noting every handle it stages and discards; `failStage` fails the n-th stage. */
    const spied = (w: World, failStage?: number) => {
      const inner = w.h.stores.documentContents;
      const staged: StagedContent[] = [];
      const discarded: StagedContent[] = [];
      const documentContents: DocumentContentStore = {
        ...inner,
        stage: (tenant, bytes) =>
          staged.length + 1 === failStage
            ? (staged.push(stagedContent({ bytes: null, ref: 'failed', size: 0 })), TE.left(storeFailure(new Error('disk full'))))
            : pipe(inner.stage(tenant, bytes), TE.map((h) => (staged.push(h), h))),
        discard: (tenant, h) => (discarded.push(h), inner.discard(tenant, h)),
      };
      const deps = { ...w.deps, stores: { ...w.deps.stores, documentContents } };
      return { deps: { ...deps, handlers: { 'seal.complete': handleSeal(deps) } }, staged, discarded };
    };
    const signed = async () => {
      const w = world();
      const s = await sentRequest(w);
      for (const i of s.signers.keys()) await sign(w, s, i);
      const [job] = await claim(w, ['seal.complete']);
      return { w, s, job: job! };
    };
    /** The release runs after the record, without being awaited by it. */
    const settled = () => new Promise((ok) => setImmediate(ok));

    it('both artifacts, when its record does not commit (the job’s lease was lost)', async () => {
      const { w, s, job } = await signed();
      const { deps, staged, discarded } = spied(w);
      // Another worker finished the job meanwhile: this run's record cannot complete it, and rolls back.
      await right(w.h.uow.transaction((tx) => tx.jobs.complete(job.id, WORKER)));
      expect(await runClaimedJob(deps)(job, WORKER)()).toEqual({ _tag: 'LeaseLost' });
      await settled();
      expect(staged).toHaveLength(2);
      expect(discarded).toEqual(staged);
      expect(await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id)))).toBeNull();
    });

    it('the finished PDF, when its certificate cannot be staged', async () => {
      const { w, job } = await signed();
      const { deps, staged, discarded } = spied(w, 2);
      expect((await runClaimedJob(deps)(job, WORKER)())._tag).toBe('Retrying');
      await settled();
      expect(discarded).toEqual([staged[0]]);
    });

    it('both, once a committed record has made them its own (discard leaves named content alone)', async () => {
      const { w, s, job } = await signed();
      const { deps, staged, discarded } = spied(w);
      expect(await runClaimedJob(deps)(job, WORKER)()).toEqual({ _tag: 'Done' });
      await settled();
      expect(discarded).toEqual(staged);
      expect(await right(w.h.stores.documentContents.get(s.p.tenant, finishedKey(s.req.id)))).toEqual(w.renderer.finished[0]!.output);
    });
  });
});

describe('handleExpire', () => {
  const expiring = async (w: World) => {
    const expiresAt = new Date(w.h.clock.now().getTime() + 3_600_000).toISOString();
    const s = await sentRequest(w, { signers: [{}, {}], expiresAt, documents: 2 });
    const jobs = await claim(w, ['expire']);
    expect(jobs.map((j) => [j.payload, j.runAt, j.dedupeKey])).toEqual([[{ requestId: s.req.id }, expiresAt, `expire:${s.req.id}`]]);
    return { s, expiresAt, job: jobs[0]! };
  };

  it('a request still open at its expiry ends EXPIRED, its documents too, with request.expired and evidence', async () => {
    const w = world();
    const { s, expiresAt, job } = await expiring(w);
    await sign(w, s, 0);
    w.h.clock.set(expiresAt);
    await runOk(w, handleExpire(w.deps), job);
    const expired = await requestNow(w, s.p.tenant, s.req.id);
    expect(expired).toMatchObject({ status: 'EXPIRED', expiredAt: expiresAt });
    for (const d of s.docs) expect((await right(w.h.stores.documents.findById(s.p.tenant, d.doc.id)))!.status).toBe('EXPIRED');
    expect((await eventsOf(w, s.p.tenant, 'request.expired')).map((e) => e.data)).toEqual([{ request_id: s.req.id, status: 'EXPIRED', expired_at: expiresAt }]);
    expect((await evidenceOf(w, s.p.tenant, s.req.id)).filter((e) => e.action === 'expired')).toEqual([expect.objectContaining({ at: expiresAt, recipientId: null })]);
    expect(await left(signAsRecipient(w.deps)(s.signers[1]!.token, signInput(s.signers[1]!), CLIENT))).toMatchObject({ _tag: 'InvalidState' });
  });

  it('run before the expiry (early, or for a request whose expiry was moved) it changes nothing', async () => {
    const w = world();
    const { s, expiresAt, job } = await expiring(w);
    w.h.clock.set(new Date(Date.parse(expiresAt) - 1));
    const before = await records(w, s);
    await runOk(w, handleExpire(w.deps), job);
    expect(await records(w, s)).toEqual(before);
  });

  it('a request that ended otherwise stays as it ended', async () => {
    const w = world();
    const done = await expiring(w);
    await completeAndSeal(w, done.s);
    const cancelled = await expiring(w);
    await cancel(w, cancelled.s);
    w.h.clock.set(new Date(Date.parse(cancelled.expiresAt) + DAY));
    for (const { s, job } of [done, cancelled]) {
      const before = await records(w, s);
      await runOk(w, handleExpire(w.deps), job);
      expect(await records(w, s)).toEqual(before);
    }
  });
});

describe('a sent request that ends', () => {
  /** The dedupe keys of the request's scheduled jobs still in the queue, soonest first. */
  const scheduled = async (w: World, s: Sent) =>
    (await right(w.h.stores.jobs.list({ requestId: s.req.id, kinds: ['expire', 'remind.auto'], limit: 10 }))).map((j) => j.dedupeKey);
  const open = async (w: World) => {
    const expiresAt = new Date(w.h.clock.now().getTime() + 10 * DAY).toISOString();
    const s = await sentRequest(w, { signers: [{}, {}], expiresAt });
    expect(await scheduled(w, s)).toEqual([`remind.auto:${s.req.id}:1`, `expire:${s.req.id}`]);
    return { s, expiresAt };
  };

  it('takes its expiry and its next automatic reminder with it, however it ends, and not before', async () => {
    const w = world({ reminderIntervalMs: DAY });
    const signedOnce = await open(w);
    await sign(w, signedOnce.s, 0);
    expect(await scheduled(w, signedOnce.s)).toHaveLength(2);

    const completed = await open(w);
    await completeAndSeal(w, completed.s);
    expect((await requestNow(w, completed.s.p.tenant, completed.s.req.id)).status).toBe('COMPLETED');

    const declined = await open(w);
    await right(declineAsRecipient(w.deps)(declined.s.signers[1]!.token, 'not mine to sign', CLIENT));

    const cancelled = await open(w);
    await cancel(w, cancelled.s);

    // The expiry is the job that ends this one: it is held while it runs, so it stays until its own completion.
    const expired = await open(w);
    w.h.clock.set(expired.expiresAt);
    const [expiry] = (await claim(w, ['expire'])).filter((j) => j.payload.requestId === expired.s.req.id);
    await runOk(w, handleExpire(w.deps), expiry!);
    expect((await requestNow(w, expired.s.p.tenant, expired.s.req.id)).status).toBe('EXPIRED');

    for (const { s } of [completed, declined, cancelled, expired]) expect(await scheduled(w, s), s.req.id).toEqual([]);
    expect(await scheduled(w, signedOnce.s)).toHaveLength(2);
  });

  it("takes only its own expiry, whatever the other requests' ids (one that begins with its id too)", async () => {
    const w = world();
    // Request ids of different lengths: req_1, then req_10 (the built-in generators make them all one length).
    const made = w.deps.ids;
    let n = 0;
    const ids = { next: (p: Parameters<typeof made.next>[0]) => (p === 'req' ? `req_${++n === 2 ? 10 : n}` : made.next(p)) };
    Object.assign(w.deps, { ids });
    Object.assign(w.h, { ids });
    const expiresAt = new Date(w.h.clock.now().getTime() + 10 * DAY).toISOString();
    const [one, ten] = [await sentRequest(w, { expiresAt }), await sentRequest(w, { expiresAt })];
    expect([one.req.id, ten.req.id]).toEqual(['req_1', 'req_10']);
    await cancel(w, one);
    expect(await scheduled(w, one)).toEqual([]);
    expect(await scheduled(w, ten)).toEqual(['expire:req_10']);
  });

  it('leaves a reminder a worker holds to run, find nothing to do and complete', async () => {
    const w = world({ reminderIntervalMs: DAY });
    const { s } = await open(w);
    const [round1] = await claim(w, ['remind.auto']);
    await cancel(w, s);
    expect(await scheduled(w, s)).toEqual([`remind.auto:${s.req.id}:1`]);
    await runOk(w, handleAutoRemind({ ...w.deps, reminderIntervalMs: DAY }), round1!);
    expect(await scheduled(w, s)).toEqual([]);
    expect(await claim(w, ['mail.remind'])).toEqual([]);
  });
});

describe('handleAutoRemind', () => {
  const autoRemind = (w: World) => handleAutoRemind({ ...w.deps, reminderIntervalMs: DAY });

  it('reminds the signers due who have not signed, and schedules the next round one interval later', async () => {
    const w = world({ reminderIntervalMs: DAY });
    const s = await sentRequest(w, { signers: [{}, {}, {}], cc: 1 });
    const sentAt = w.h.clock.now().getTime();
    await sign(w, s, 0);
    const [round1] = await claim(w, ['remind.auto']);
    expect([round1!.payload, round1!.runAt, round1!.dedupeKey]).toEqual([{ requestId: s.req.id, round: 1 }, iso(sentAt + DAY), `remind.auto:${s.req.id}:1`]);
    w.h.clock.set(round1!.runAt);
    await runOk(w, autoRemind(w), round1!);
    const reminders = await claim(w, ['mail.remind']);
    expect(reminders.map((j) => [j.payload, j.dedupeKey])).toEqual(
      [s.signers[1]!, s.signers[2]!].map((x) => [{ requestId: s.req.id, recipientId: x.rcp.id }, `remind:${x.rcp.id}:auto:1`]),
    );
    const [round2] = await claim(w, ['remind.auto']);
    expect([round2!.payload, round2!.runAt, round2!.dedupeKey]).toEqual([{ requestId: s.req.id, round: 2 }, iso(sentAt + 2 * DAY), `remind.auto:${s.req.id}:2`]);
    // The reminders go out as reminders.
    for (const job of reminders) await runOk(w, handleInvitationMail(w.deps), job);
    expect(w.mail.sent.map((m) => [m.message.to, m.message.subject])).toEqual([
      ['signer2@example.com', '[TEST] Reminder: please sign: Lease'],
      ['signer3@example.com', '[TEST] Reminder: please sign: Lease'],
    ]);
  });

  it('in sequential order reminds only the signer whose turn it is', async () => {
    const w = world({ reminderIntervalMs: DAY });
    const s = await sentRequest(w, { signingOrder: 'sequential', signers: [{ order: 1 }, { order: 2 }] });
    const [round1] = await claim(w, ['remind.auto']);
    await runOk(w, autoRemind(w), round1!);
    expect((await claim(w, ['mail.remind'])).map((j) => j.payload.recipientId)).toEqual([s.signers[0]!.rcp.id]);
  });

  it('schedules no round at or after the request’s expiry', async () => {
    for (const [offset, next] of [[2 * DAY, false], [2 * DAY + 1, true]] as const) {
      const w = world({ reminderIntervalMs: DAY });
      await sentRequest(w, { expiresAt: new Date(w.h.clock.now().getTime() + offset).toISOString() });
      const [round1] = await claim(w, ['remind.auto']);
      w.h.clock.set(round1!.runAt);
      await runOk(w, autoRemind(w), round1!);
      expect(await claim(w, ['mail.remind'])).toHaveLength(1);
      expect((await claim(w, ['remind.auto'])).length, `expiry ${offset} ms after sending`).toBe(next ? 1 : 0);
    }
  });

  it('does nothing once the request ended, and schedules no further round', async () => {
    const w = world({ reminderIntervalMs: DAY });
    const s = await sentRequest(w, { signers: [{}, {}] });
    const [round1] = await claim(w, ['remind.auto']);
    await cancel(w, s);
    const before = await records(w, s);
    await runOk(w, autoRemind(w), round1!);
    expect(await claim(w, ['mail.remind', 'remind.auto'])).toEqual([]);
    expect(await records(w, s)).toEqual(before);
  });
});
