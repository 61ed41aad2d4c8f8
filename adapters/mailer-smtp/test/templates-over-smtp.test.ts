import { type Recipient, type SignatureRequest } from '@esig/core';
import { completedMail, invitationMail, otpMail } from '@esig/core/internal';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@esig/testkit/smtp';
import { createSmtpTransport } from '../src/index.js';

const recipient: Recipient = {
  id: 'rcp_01JD0000000000000000000001',
  email: 'ana@example.com',
  firstName: 'Ana',
  lastName: 'Muñoz',
  role: 'signer',
  order: 1,
  authentication: 'email_otp',
  accessCodeHash: null,
  status: 'NOTIFIED',
  signedAt: null,
  declinedAt: null,
  declineReason: null,
  authenticatedAt: null,
  otp: null,
  authFailures: 0,
  otpSentAt: [],
  signature: null,
};

const request: SignatureRequest = {
  id: 'req_01JD0000000000000000000001',
  orgId: 'org_01JD0000000000000000000001',
  mode: 'test',
  title: 'Lease «Rue de la Paix» <b>&</b> 🏠',
  message: 'Please sign by Friday.',
  status: 'SENT',
  documentIds: ['doc_01JD0000000000000000000001'],
  recipients: [recipient],
  fields: [],
  signingOrder: 'parallel',
  requestedSignatureLevel: 'SES',
  expiresAt: '2026-12-24T18:30:00.000Z',
  createdAt: '2026-11-23T08:00:00.000Z',
  sentAt: '2026-11-23T08:00:10.000Z',
  completedAt: null,
  cancelledAt: null,
  declinedAt: null,
  expiredAt: null,
  certificateId: null,
  finishedSha256: null,
  version: 2,
};

const LINK = 'http://localhost:3000/sign/tok_q8Xv-2mB_Lk0pZr7sYtWc3nH5dJ9aEfG1uIo4?x=1&y=2';

describe('the core templates, sent through nodemailer to a real SMTP server', () => {
  let smtp: TestSmtpServer;
  let transport: ReturnType<typeof createSmtpTransport>;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    transport = createSmtpTransport(smtp.url);
  });
  afterAll(async () => {
    transport.close();
    await smtp.close();
  });

  it('a test-mode invitation arrives with [TEST], the notice and the link intact in both parts', async () => {
    const mail = invitationMail({ request, recipient, link: LINK, testMode: true, messageId: '<mail.invite.job_1@esig>', reminder: false });
    expect(await transport.send(mail)()).toEqual(E.right(undefined));

    const got = await smtp.waitFor((m) => m.messageId === '<mail.invite.job_1@esig>', 2_000);
    expect(got.subject).toBe('[TEST] Please sign: Lease «Rue de la Paix» <b>&</b> 🏠');
    expect(got.to).toEqual(['ana@example.com']);
    expect(got.headers['content-type']).toMatch(/^multipart\/alternative;/);
    // What was rendered is what arrived, part for part.
    expect(got.text.trim()).toBe(mail.text.trim());
    expect(got.html.trim()).toBe(mail.html.trim());
    expect(got.text).toContain(`\n${LINK}\n`);
    expect(got.html).toContain(`href="${LINK.replace(/&/g, '&amp;')}"`);
    expect(got.text).toContain('TEST — not legally binding');
    expect(got.html).toContain('TEST — not legally binding');
    expect(got.html).toContain('Lease «Rue de la Paix» &lt;b&gt;&amp;&lt;/b&gt; 🏠');
  });

  it('a live completion mail and an OTP mail arrive without [TEST]', async () => {
    const done = completedMail({ request: { ...request, mode: 'live', status: 'COMPLETED' }, recipient, link: LINK, testMode: false, messageId: '<mail.completed.job_2@esig>' });
    const otp = otpMail({ request: { ...request, mode: 'live' }, recipient, code: '049213', testMode: false, messageId: '<otp.job_3@esig>' });
    expect(await transport.send(done)()).toEqual(E.right(undefined));
    expect(await transport.send(otp)()).toEqual(E.right(undefined));

    const gotDone = await smtp.waitFor((m) => m.messageId === '<mail.completed.job_2@esig>', 2_000);
    expect(gotDone.subject).toBe('Completed: Lease «Rue de la Paix» <b>&</b> 🏠');
    expect(gotDone.text).toContain(`\n${LINK}\n`);
    expect(gotDone.headers['content-type']).toMatch(/^multipart\/alternative;/);

    const gotOtp = await smtp.waitFor((m) => m.messageId === '<otp.job_3@esig>', 2_000);
    expect(gotOtp.subject.startsWith('[TEST]')).toBe(false);
    expect(gotOtp.text).toContain('049213');
    expect(gotOtp.html).toContain('049213');
  });
});
