import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { MailFailure, MailMessage } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startSmtpServer, type TestSmtpServer } from '@esig/testkit/smtp';
import { onItsTimer } from '@esig/testkit/timers';
import { createSmtpTransport, toMailFailure } from '../src/index.js';

const LINK = 'https://esig.example.com/sign/tok_Zx9-QwErTy_123456789abcdefghijk?lang=en&src=mail';
// The HTML part carries the link as an attribute value, where `&` is written `&amp;`.
const LINK_IN_HTML = LINK.replace(/&/g, '&amp;');

const message = (over: Partial<MailMessage> = {}): MailMessage => ({
  to: 'ana@example.com',
  subject: 'Please sign: Lease «Rue de la Paix» 🏠',
  text: `Hello Ana,\n\nReview and sign:\n${LINK}\n`,
  html: `<!DOCTYPE html><html><body><p>Hello Ana,</p><p><a href="${LINK_IN_HTML}">Review and sign</a></p></body></html>`,
  messageId: '<mail.invite.job_01JD00000000000000000000AB@esig>',
  ...over,
});

const freePort = async (): Promise<number> => {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
};

const failure = async (r: Promise<E.Either<MailFailure, void>>): Promise<MailFailure> => {
  const e = await r;
  if (E.isRight(e)) throw new Error('expected the send to fail');
  return e.left;
};

describe('createSmtpTransport against a real SMTP server', () => {
  let smtp: TestSmtpServer;
  const transports: Array<{ close(): void }> = [];
  const transport = (url: string, opts?: { from?: string }) => {
    const t = createSmtpTransport(url, opts);
    transports.push(t);
    return t;
  };

  beforeAll(async () => {
    smtp = await startSmtpServer({ rejectRecipients: /@gone\.example$/ });
  });
  afterEach(() => {
    for (const t of transports.splice(0)) t.close();
  });
  afterAll(async () => {
    await smtp.close();
  });

  it('delivers a multipart message with its subject, Message-ID, sender and the link intact in both parts', async () => {
    const r = await transport(smtp.url).send(message())();
    expect(r).toEqual(E.right(undefined));

    const got = await smtp.waitFor((m) => m.messageId === '<mail.invite.job_01JD00000000000000000000AB@esig>', 2_000);
    expect(got.to).toEqual(['ana@example.com']);
    expect(got.headers['to']).toBe('ana@example.com');
    expect(got.from).toBe('esig <no-reply@localhost>');
    expect(got.envelopeFrom).toBe('no-reply@localhost');
    expect(got.subject).toBe('Please sign: Lease «Rue de la Paix» 🏠');
    expect(got.headers['content-type']).toMatch(/^multipart\/alternative;/);
    expect(got.text).toContain(`\n${LINK}\n`);
    expect(got.html).toContain(`href="${LINK_IN_HTML}"`);
    expect(got.html).toContain('<p>Hello Ana,</p>');
  });

  it('adds the angle brackets a bare Message-ID lacks, and uses the configured From', async () => {
    const r = await transport(smtp.url, { from: 'Acme Contracts <contracts@acme.example>' }).send(
      message({ to: 'bo@example.com', messageId: 'otp.rcp_1.3@esig', subject: '[TEST] Your verification code for: Lease' }),
    )();
    expect(E.isRight(r)).toBe(true);
    const got = await smtp.waitFor((m) => m.to.includes('bo@example.com'), 2_000);
    expect(got.messageId).toBe('<otp.rcp_1.3@esig>');
    expect(got.from).toBe('Acme Contracts <contracts@acme.example>');
    expect(got.subject).toBe('[TEST] Your verification code for: Lease');
    expect(got.subject.startsWith('[TEST] ')).toBe(true);
  });

  it('maps a 550 refusal of the recipient to a permanent failure, and nothing arrives', async () => {
    const before = smtp.messages.length;
    const f = await failure(transport(smtp.url).send(message({ to: 'carl@gone.example' }))());
    expect(f._tag).toBe('MailFailure');
    expect(f.permanent).toBe(true);
    expect(f.detail).toContain('550');
    expect(smtp.messages.length).toBe(before);
  });

  it('maps a refused connection (closed port) to a temporary failure', async () => {
    const port = await freePort();
    const f = await failure(transport(`smtp://127.0.0.1:${port}`).send(message())());
    expect(f).toMatchObject({ _tag: 'MailFailure', permanent: false });
    expect(f.detail).toMatch(/ECONNREFUSED|ESOCKET|ECONNECTION/);
  });

  it('maps a server that never greets to a temporary failure once the greeting times out', async () => {
    const silent: Server = createServer(() => {
      // Accept the connection and say nothing.
    });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const { port } = silent.address() as AddressInfo;
    try {
      // URL query parameters override the transport's default timeouts. The greeting's timer is armed once
      // connected, which the test cannot see from outside: onItsTimer waits for a 300 ms timer.
      const f = await failure(onItsTimer(() => transport(`smtp://127.0.0.1:${port}?greetingTimeout=300`).send(message())(), 300));
      expect(f).toMatchObject({ _tag: 'MailFailure', permanent: false });
      expect(f.detail).toMatch(/ETIMEDOUT/);
    } finally {
      silent.close();
    }
  });
});

describe('toMailFailure', () => {
  const code = (responseCode: number) => toMailFailure(Object.assign(new Error('refused'), { code: 'EENVELOPE', responseCode, response: `${responseCode} no` }));

  it('treats SMTP 5xx replies as permanent, except 503 (a session error)', () => {
    expect([550, 551, 552, 553, 554, 500, 501].map((c) => code(c).permanent)).toEqual([true, true, true, true, true, true, true]);
    expect(code(503).permanent).toBe(false);
  });

  it('treats 4xx replies, timeouts and connection errors as temporary', () => {
    expect([421, 450, 451, 452].map((c) => code(c).permanent)).toEqual([false, false, false, false]);
    expect(toMailFailure(Object.assign(new Error('Greeting never received'), { code: 'ETIMEDOUT' })).permanent).toBe(false);
    expect(toMailFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ESOCKET' })).permanent).toBe(false);
    expect(toMailFailure('weird').permanent).toBe(false);
  });

  it('keeps the code, reply and command in the detail', () => {
    const f = toMailFailure(Object.assign(new Error('Recipient refused'), { code: 'EENVELOPE', responseCode: 550, command: 'RCPT TO', response: '550 5.1.1 mailbox unavailable' }));
    expect(f).toEqual({ _tag: 'MailFailure', permanent: true, detail: 'EENVELOPE 550 RCPT TO 550 5.1.1 mailbox unavailable' });
  });
});
