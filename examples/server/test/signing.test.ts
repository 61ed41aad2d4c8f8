import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stores } from '@esig/core';
import { ok } from '@esig/testkit';
import type { TestSmtpServer } from '@esig/testkit/smtp';
import { startSmtpServer } from '@esig/testkit/smtp';
import { T } from '../src/tokens.js';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let smtp: TestSmtpServer;
const work = mkdtempSync(join(tmpdir(), 'esig-signing-'));
beforeAll(async () => {
  smtp = await startSmtpServer();
  s = await startTestServer({ ESIG_TEST_SMTP_URL: smtp.url, ESIG_WORKER_POLL_MS: '50', ESIG_PUBLIC_URL: 'http://esig.test' });
});
afterAll(async () => {
  await s.close();
  await smtp.close();
  rmSync(work, { recursive: true, force: true });
});

const linkIn = (text: string) => /http:\/\/esig\.test\/sign\/([A-Za-z0-9]{43,})/.exec(text)?.[1];
const mailFor = async (to: string, subject: RegExp) => smtp.waitFor((m) => m.to.includes(to) && subject.test(m.subject), 15_000);
const signer = (token: string) => ({
  get: () => s.call('GET', `/api/v1/signing/${token}`, { key: null, headers: { 'user-agent': 'SignerBrowser/1.0' } }),
  post: (action: string, body: unknown = {}) => s.call('POST', `/api/v1/signing/${token}/${action}`, { key: null, body, headers: { 'user-agent': 'SignerBrowser/1.0' } }),
});
const waitFor = async <T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};
const toFile = (bytes: Uint8Array) => {
  const file = join(work, `${Math.random()}.pdf`);
  writeFileSync(file, bytes);
  return file;
};
const pdftotext = (bytes: Uint8Array) => execFileSync('pdftotext', ['-layout', toFile(bytes), '-'], { encoding: 'utf8' });
/** qpdf --check exits non-zero on a damaged PDF (and 3 for warnings only, which we also refuse). */
const qpdfCheck = (bytes: Uint8Array) => execFileSync('qpdf', ['--check', toFile(bytes)], { encoding: 'utf8' });
const fetchPdf = async (path: string, key: string | null = s.key) => {
  const res = await fetch(`${s.url}${path}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, bytes: new Uint8Array(await res.arrayBuffer()), type: res.headers.get('content-type') };
};

/** Two signers (parallel) and a cc, with a text field and a date. */
const prepare = async (opts: { signingOrder?: 'parallel' | 'sequential' } = {}) => {
  const doc = await s.uploadPdf('agreement.pdf', 2);
  const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Service agreement', documentIds: [doc.id], message: 'Please sign by Friday.', ...opts } })).body;
  const add = async (email: string, firstName: string, extra: object = {}) =>
    (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName, lastName: 'Tester', ...extra } })).body;
  const ada = await add(`ada.${req.id}@example.com`, 'Ada');
  const bob = await add(`bob.${req.id}@example.com`, 'Bob');
  const cc = await add(`cc.${req.id}@example.com`, 'Carol', { role: 'cc' });
  const field = (recipientId: string, type: string, page: number, y: number, extra: object = {}) =>
    s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId, type, page, x: 72, y, width: 200, height: 30, ...extra } });
  const adaSig = (await field(ada.id, 'signature', 2, 500)).body;
  const adaText = (await field(ada.id, 'text', 1, 300)).body;
  await field(ada.id, 'date_signed', 2, 560);
  const bobSig = (await field(bob.id, 'signature', 2, 620)).body;
  return { doc, req, ada, bob, cc, adaSig, adaText, bobSig };
};

describe('signing end to end (real SMTP server, worker, PDFs)', () => {
  it('mails invitations, records opened/viewed/signed, completes once, seals both PDFs and releases request.completed', async () => {
    const p = await prepare();
    const sent = await s.call('POST', `/api/v1/signature-requests/${p.req.id}/send`, { headers: { 'idempotency-key': `send-${p.req.id}` } });
    expect(sent.status).toBe(200);

    const adaMail = await mailFor(p.ada.email, /Please sign: Service agreement/);
    const bobMail = await mailFor(p.bob.email, /Please sign/);
    expect(adaMail.subject.startsWith('[TEST] ')).toBe(true);
    expect(adaMail.text).toContain('TEST');
    expect(adaMail.html).toContain('http://esig.test/sign/');
    expect(adaMail.text).toContain('Please sign by Friday.');
    // cc recipients are not invited to sign.
    expect(smtp.messages.some((m) => m.to.includes(p.cc.email))).toBe(false);

    const adaToken = linkIn(adaMail.text)!;
    const bobToken = linkIn(bobMail.text)!;
    expect(adaToken).toBeDefined();

    await waitFor(async () => ((await s.call('GET', `/api/v1/signature-requests/${p.req.id}`)).body.recipients.every((r: any) => r.role === 'cc' || r.status === 'NOTIFIED') ? true : undefined), 'NOTIFIED');

    const view = await signer(adaToken).get();
    expect(view.status).toBe(200);
    expect(view.body.request).toMatchObject({ id: p.req.id, title: 'Service agreement', status: 'SENT', testMode: true });
    expect(view.body.recipient).toMatchObject({ id: p.ada.id, status: 'OPENED', authenticated: true, yourTurn: true });
    expect(view.body.fields.map((f: any) => f.id).sort()).toEqual(expect.arrayContaining([p.adaSig.id, p.adaText.id]));
    expect(view.body.fields.every((f: any) => f.recipientId === p.ada.id)).toBe(true);
    expect(JSON.stringify(view.body)).not.toContain(p.bob.email);

    const original = await fetchPdf(`/api/v1/signing/${adaToken}/documents/${p.doc.id}`, null);
    expect(original.status).toBe(200);
    expect((await PDFDocument.load(original.bytes)).getPageCount()).toBe(2);
    expect((await signer(adaToken).post('view')).body.recipient.status).toBe('VIEWED');

    // Missing a required value is refused with the field named.
    const incomplete = await signer(adaToken).post('sign', { values: {}, signature: { kind: 'typed', value: 'Ada Tester' } });
    expect(incomplete.status).toBe(400);
    expect(incomplete.body.errors[0].path).toBe(`values.${p.adaText.id}`);

    const signed = await signer(adaToken).post('sign', { values: { [p.adaText.id]: 'ACME-4711' }, signature: { kind: 'typed', value: 'Ada Tester' } });
    expect(signed.status).toBe(200);
    expect(signed.body.recipient.status).toBe('SIGNED');
    expect((await signer(adaToken).post('sign', { values: { [p.adaText.id]: 'x' }, signature: { kind: 'typed', value: 'Ada' } })).status).toBe(409);
    expect((await s.call('GET', `/api/v1/signature-requests/${p.req.id}/document`)).status).toBe(409);

    await signer(bobToken).get();
    await signer(bobToken).post('view');
    const last = await signer(bobToken).post('sign', { values: {}, signature: { kind: 'typed', value: 'Bob Tester' } });
    // Every signer has signed; COMPLETED waits for the finished document and the certificate (the spec).
    expect([last.body.request.status, last.body.everyoneSigned, last.body.finishedDocumentAvailable]).toEqual(['SENT', true, false]);

    // A client polls the status, as a user would; the moment it reads COMPLETED both PDFs are there.
    await waitFor(async () => ((await s.call('GET', `/api/v1/signature-requests/${p.req.id}`)).body.status === 'COMPLETED' ? true : undefined), 'COMPLETED');
    const done = await s.call('GET', `/api/v1/signature-requests/${p.req.id}/document`);
    expect(done.status).toBe(200);
    expect((await s.call('GET', `/api/v1/signature-requests/${p.req.id}/certificate`)).status).toBe(200);
    expect(done.headers.get('content-type')).toBe('application/pdf');
    const finished = await fetchPdf(`/api/v1/signature-requests/${p.req.id}/document`);
    expect((await PDFDocument.load(finished.bytes)).getPageCount()).toBe(2);
    const text = pdftotext(finished.bytes);
    expect(text).toContain('Ada Tester');
    expect(text).toContain('Bob Tester');
    expect(text).toContain('ACME-4711');
    expect(text).toContain('TEST — not legally binding');
    expect(qpdfCheck(finished.bytes)).toMatch(/No syntax or stream encoding errors found/);

    const certificate = await fetchPdf(`/api/v1/signature-requests/${p.req.id}/certificate`);
    expect(certificate.type).toBe('application/pdf');
    const certText = pdftotext(certificate.bytes);
    expect(certText).toContain(p.req.id);
    expect(certText).toContain('SignerBrowser/1.0');
    expect(certText).not.toMatch(/achieved/i);
    expect(qpdfCheck(certificate.bytes)).toMatch(/No syntax or stream encoding errors found/);

    const req = (await s.call('GET', `/api/v1/signature-requests/${p.req.id}`)).body;
    expect(req).toMatchObject({ status: 'COMPLETED', certificateId: expect.stringMatching(/^coc_/) });
    const certJson = await s.call('GET', `/api/v1/signature-requests/${p.req.id}/certificate`, { headers: { accept: 'application/json' } });
    expect(certJson.body).toMatchObject({ certificateId: req.certificateId, requestId: p.req.id, requestedSignatureLevel: 'SES', testMode: true });
    const actions = certJson.body.events.map((e: any) => e.action);
    expect(actions).toEqual(expect.arrayContaining(['sent', 'notified', 'opened', 'viewed', 'signed', 'completed']));
    expect(certJson.body.events.find((e: any) => e.action === 'signed').userAgent).toBe('SignerBrowser/1.0');

    // The spec's request.completed event, exactly once, released after both PDFs were stored.
    const events = (await s.call('GET', '/api/v1/events?type=request.completed&limit=100')).body.data.filter((e: any) => e.data.request_id === p.req.id);
    expect(events).toHaveLength(1);
    const ev = events[0];
    expect(ev.id).toBe(`request.completed:${p.req.id}`);
    const sha = (await s.call('GET', `/api/v1/documents/${p.doc.id}`)).body.sha256;
    const { createHash } = await import('node:crypto');
    expect(ev.data).toEqual({
      request_id: p.req.id,
      status: 'COMPLETED',
      completed_at: req.completedAt,
      requested_signature_level: 'SES',
      documents: [{ document_id: p.doc.id, sha256: sha, page_count: 2 }],
      document_sha256: createHash('sha256').update(finished.bytes).digest('hex'),
      certificate: { certificate_id: req.certificateId },
    });
    expect((await s.call('GET', `/api/v1/documents/${p.doc.id}`)).body.status).toBe('COMPLETED');

    // Everyone, cc included, gets the completed notice with a link that opens the finished PDF.
    const ccMail = await mailFor(p.cc.email, /Completed: Service agreement/);
    const ccToken = linkIn(ccMail.text)!;
    expect((await signer(ccToken).get()).body.finishedDocumentAvailable).toBe(true);
    const viaLink = await fetchPdf(`/api/v1/signing/${ccToken}/document`, null);
    expect(viaLink.bytes).toEqual(finished.bytes);
    await mailFor(p.ada.email, /Completed/);
    // One invitation per signer for the one send.
    expect(smtp.messages.filter((m) => m.to.includes(p.ada.email) && /Please sign/.test(m.subject))).toHaveLength(1);
  }, 60_000);

  it('invites sequential signers one after the other', async () => {
    const p = await prepare({ signingOrder: 'sequential' });
    await s.call('POST', `/api/v1/signature-requests/${p.req.id}/send`);
    const adaMail = await mailFor(p.ada.email, /Please sign/);
    const adaToken = linkIn(adaMail.text)!;
    // Once no invitation job of the request is left, every invitation the send queued has been mailed (a job
    // ends only after the SMTP server took its message): only then does "none for Bob" mean he was not invited.
    const stores = s.container.resolve<Stores>(T.Stores);
    await waitFor(
      async () => ((await ok(stores.jobs.list({ kinds: ['mail.invite'], requestId: p.req.id, limit: 10 }))).length === 0 ? true : undefined),
      'the invitations the send queued to go out',
    );
    expect(smtp.messages.some((m) => m.to.includes(p.bob.email))).toBe(false);
    await signer(adaToken).post('sign', { values: { [p.adaText.id]: 'v' }, signature: { kind: 'typed', value: 'Ada Tester' } });
    const bobMail = await mailFor(p.bob.email, /Please sign/);
    expect((await signer(linkIn(bobMail.text)!).get()).body.recipient.yourTurn).toBe(true);
  }, 30_000);

  it('a decline ends the request and its documents as DECLINED, keeping the reason out of events', async () => {
    const p = await prepare();
    await s.call('POST', `/api/v1/signature-requests/${p.req.id}/send`);
    const token = linkIn((await mailFor(p.bob.email, /Please sign/)).text)!;
    const declined = await signer(token).post('decline', { reason: 'Wrong company name' });
    expect(declined.body.request.status).toBe('DECLINED');
    expect((await s.call('GET', `/api/v1/documents/${p.doc.id}`)).body.status).toBe('DECLINED');
    const ev = (await s.call('GET', '/api/v1/events?type=request.declined&limit=100')).body.data.find((e: any) => e.data.request_id === p.req.id);
    expect(ev.data).toMatchObject({ recipient_id: p.bob.id, status: 'DECLINED' });
    expect(JSON.stringify(ev)).not.toContain('Wrong company');
    const again = await signer(token).get();
    expect(again.body.request.status).toBe('DECLINED');
    expect((await signer(token).post('sign', { values: {}, signature: { kind: 'typed', value: 'B' } })).status).toBe(409);
  }, 30_000);

  it('asks for identification before showing anything: e-mailed code and access code, locked after 5 failures', async () => {
    const doc = await s.uploadPdf('id.pdf', 1);
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'ID check', documentIds: [doc.id] } })).body;
    const otp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email: `otp.${req.id}@example.com`, firstName: 'Otto', lastName: 'P', authentication: 'email_otp' } })).body;
    const code = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email: `code.${req.id}@example.com`, firstName: 'Cody', lastName: 'Q', authentication: 'access_code', accessCode: 'blue-42' } })).body;
    for (const r of [otp, code])
      await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: r.id, type: 'signature', page: 1, x: 72, y: 500, width: 150, height: 40 } });
    await s.call('POST', `/api/v1/signature-requests/${req.id}/send`);

    const otpToken = linkIn((await mailFor(otp.email, /Please sign/)).text)!;
    const before = await signer(otpToken).get();
    expect(before.body.recipient).toMatchObject({ authenticated: false, authentication: 'email_otp' });
    expect(before.body.documents).toEqual([]);
    expect(before.body.fields).toEqual([]);
    expect((await fetchPdf(`/api/v1/signing/${otpToken}/documents/${doc.id}`, null)).status).toBe(409);
    expect((await signer(otpToken).post('sign', { values: {}, signature: { kind: 'typed', value: 'Otto' } })).status).toBe(409);

    const sentCode = await signer(otpToken).post('otp');
    expect(sentCode.status).toBe(202);
    expect(sentCode.body.sentTo).toMatch(/^o…@example\.com$/);
    const codeMail = await mailFor(otp.email, /verification code/);
    const digits = /\b(\d{6})\b/.exec(codeMail.text)![1]!;
    const wrong = await signer(otpToken).post('authenticate', { code: digits === '000000' ? '111111' : '000000' });
    expect(wrong.status).toBe(400);
    expect(wrong.body.detail).toMatch(/4 attempt\(s\) left/);
    const ok = await signer(otpToken).post('authenticate', { code: digits });
    expect(ok.status).toBe(200);
    expect(ok.body.recipient.authenticated).toBe(true);
    expect(ok.body.documents).toHaveLength(1);

    const codeToken = linkIn((await mailFor(code.email, /Please sign/)).text)!;
    for (let i = 0; i < 4; i++) expect((await signer(codeToken).post('authenticate', { code: 'red-1' })).status).toBe(400);
    const fifth = await signer(codeToken).post('authenticate', { code: 'red-1' });
    expect(fifth.status).toBe(409);
    expect((await signer(codeToken).post('authenticate', { code: 'blue-42' })).status).toBe(409);
    expect((await signer(codeToken).get()).body.recipient.locked).toBe(true);
    const evts = (await s.call('GET', '/api/v1/events?type=signer.authenticated&limit=100')).body.data.filter((e: any) => e.data.request_id === req.id);
    expect(evts).toHaveLength(1);
    expect(evts[0].data).toMatchObject({ recipient_id: otp.id, method: 'email_otp' });
  }, 30_000);

  it('answers 404 for an unknown link and keeps test mail in the mailbox without a test SMTP server', async () => {
    expect((await s.call('GET', `/api/v1/signing/${'x'.repeat(43)}`, { key: null })).status).toBe(404);
    expect((await s.call('GET', '/api/v1/signing/short', { key: null })).status).toBe(404);
  });
});

describe('adopted signatures', () => {
  it('refuses a drawn signature that is not a PNG, and a typed one that is empty or huge', async () => {
    const doc = await s.uploadPdf('sig.pdf', 1);
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Sig check', documentIds: [doc.id] } })).body;
    const r = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email: `sig.${req.id}@example.com`, firstName: 'S', lastName: 'C' } })).body;
    await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: r.id, type: 'signature', page: 1, x: 72, y: 500, width: 150, height: 40 } });
    await s.call('POST', `/api/v1/signature-requests/${req.id}/send`);
    const token = linkIn((await mailFor(r.email, /Please sign/)).text)!;
    const gif = `data:image/png;base64,${Buffer.from('GIF89a-not-a-png').toString('base64')}`;
    for (const signature of [
      { kind: 'drawn', value: gif },
      { kind: 'drawn', value: 'data:image/jpeg;base64,/9j/4AAQ' },
      { kind: 'drawn', value: 'javascript:alert(1)' },
      { kind: 'typed', value: '   ' },
      { kind: 'typed', value: 'x'.repeat(201) },
    ]) {
      const res = await signer(token).post('sign', { values: {}, signature });
      expect(res.status, JSON.stringify(signature).slice(0, 60)).toBe(400);
      expect(res.body.errors[0].path).toBe('signature.value');
    }
    expect((await signer(token).get()).body.recipient.status).not.toBe('SIGNED');
  }, 30_000);
});
