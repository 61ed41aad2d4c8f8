import { describe, expect, it } from 'vitest';
import { completedMail, invitationMail, otpMail } from '../src/internal.js';
import type { MailMessage, Recipient, SignatureRequest } from '../src/index.js';

const recipient = (over: Partial<Recipient> = {}): Recipient => ({
  id: 'rcp_01JD0000000000000000000001',
  email: 'ana@example.com',
  firstName: 'Ana',
  lastName: 'Muñoz',
  role: 'signer',
  order: 1,
  authentication: 'none',
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
  ...over,
});

const request = (over: Partial<SignatureRequest> = {}): SignatureRequest => ({
  id: 'req_01JD0000000000000000000001',
  orgId: 'org_01JD0000000000000000000001',
  mode: 'live',
  title: 'Lease agreement',
  message: 'Please sign by Friday.\nThanks!',
  status: 'SENT',
  documentIds: ['doc_01JD0000000000000000000001'],
  recipients: [recipient()],
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
  ...over,
});

// An `&` in the query is the character that HTML must escape inside an attribute.
const LINK = 'https://esig.example.com/sign/tok_AbC-123_xyz?lang=en&src=mail';

const invite = (over: Partial<Parameters<typeof invitationMail>[0]> = {}) =>
  invitationMail({ request: request(), recipient: recipient(), link: LINK, testMode: false, messageId: '<inv.1@esig>', reminder: false, ...over });

const decodeEntities = (s: string) =>
  s.replace(/&(amp|lt|gt|quot|#39);/g, (_m, e: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[e] ?? _m);

const hrefs = (html: string) => [...html.matchAll(/href="([^"]*)"/g)].map((m) => decodeEntities(m[1]!));

/** Visible text of the HTML part, tags dropped and entities decoded, whitespace collapsed. */
const htmlText = (html: string) => decodeEntities(html.replace(/<title>[\s\S]*?<\/title>/, '').replace(/<br>/g, '\n').replace(/<[^>]+>/g, ' ')).replace(/\s+/g, ' ');

const all = (testMode: boolean): MailMessage[] => [
  invite({ testMode }),
  invite({ testMode, reminder: true }),
  completedMail({ request: request(), recipient: recipient(), link: LINK, testMode, messageId: '<done.1@esig>' }),
  otpMail({ request: request(), recipient: recipient(), code: '493817', testMode, messageId: '<otp.1@esig>' }),
];

describe('invitationMail', () => {
  it('asks the recipient by first name to sign, with the message, the link and the expiry date', () => {
    const m = invite();
    expect(m).toMatchObject({ to: 'ana@example.com', subject: 'Please sign: Lease agreement', messageId: '<inv.1@esig>' });
    for (const body of [m.text, htmlText(m.html)]) {
      expect(body).toContain('Hello Ana,');
      expect(body).toContain('Please sign by Friday.');
      expect(body).toContain('Thanks!');
      expect(body).toContain('24 December 2026, 18:30 UTC');
      expect(body).toContain(LINK);
    }
    expect(m.text).toContain(`\n${LINK}\n`);
    expect(hrefs(m.html)).toEqual([LINK, LINK]);
    expect(m.html).toContain(`href="https://esig.example.com/sign/tok_AbC-123_xyz?lang=en&amp;src=mail"`);
  });

  it('has a reminder variant', () => {
    const m = invite({ reminder: true });
    expect(m.subject).toBe('Reminder: please sign: Lease agreement');
    expect(m.text).toContain('reminder');
    expect(hrefs(m.html)).toEqual([LINK, LINK]);
  });

  it('leaves out the message and the expiry when there are none', () => {
    const m = invite({ request: request({ message: null, expiresAt: null }) });
    for (const body of [m.text, htmlText(m.html)]) {
      expect(body).not.toContain('Message from the sender');
      expect(body).not.toContain('expires');
      expect(body).toContain(LINK);
    }
  });
});

describe('completedMail', () => {
  it('says the request is complete and links to the finished document', () => {
    const m = completedMail({ request: request({ status: 'COMPLETED' }), recipient: recipient({ email: 'bo@example.com', firstName: 'Bo' }), link: LINK, testMode: false, messageId: '<done.1@esig>' });
    expect(m).toMatchObject({ to: 'bo@example.com', subject: 'Completed: Lease agreement', messageId: '<done.1@esig>' });
    for (const body of [m.text, htmlText(m.html)]) {
      expect(body).toContain('Hello Bo,');
      expect(body).toContain('complete');
      expect(body).toContain(LINK);
    }
    expect(hrefs(m.html)).toEqual([LINK, LINK]);
  });
});

describe('otpMail', () => {
  it('carries the code and its 10-minute lifetime, and no link', () => {
    const m = otpMail({ request: request(), recipient: recipient(), code: '493817', testMode: false, messageId: '<otp.1@esig>' });
    expect(m.subject).toBe('Your verification code for: Lease agreement');
    for (const body of [m.text, htmlText(m.html)]) {
      expect(body).toContain('493817');
      expect(body).toContain('10 minutes');
    }
    expect(hrefs(m.html)).toEqual([]);
  });
});

describe('every template', () => {
  it('marks test mode in the subject and in both parts, and only in test mode', () => {
    for (const m of all(true)) {
      expect(m.subject.startsWith('[TEST] ')).toBe(true);
      expect(m.text).toContain('TEST — not legally binding');
      expect(htmlText(m.html)).toContain('TEST — not legally binding');
    }
    for (const m of all(false)) {
      expect(m.subject).not.toContain('[TEST]');
      expect(m.text).not.toContain('TEST');
      expect(m.html).not.toContain('TEST');
    }
  });

  it('escapes user input in the HTML part', () => {
    const evil = request({ title: '<script>alert("x")</script> & co', message: '<img src="https://evil.example/x.png"> \'hi\'' });
    const who = recipient({ firstName: '<b onmouseover="x()">Eve</b>' });
    const mails = [
      invitationMail({ request: evil, recipient: who, link: LINK, testMode: true, messageId: '<a@esig>', reminder: false }),
      completedMail({ request: evil, recipient: who, link: LINK, testMode: true, messageId: '<b@esig>' }),
      otpMail({ request: evil, recipient: who, code: '123456', testMode: true, messageId: '<c@esig>' }),
    ];
    for (const m of mails) {
      expect(m.html).not.toContain('<script>');
      expect(m.html).not.toContain('<b onmouseover');
      expect(m.html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; co');
      expect(m.html).toContain('&lt;b onmouseover=&quot;x()&quot;&gt;Eve&lt;/b&gt;');
      // The text part is plain text: shown as written.
      expect(m.text).toContain('<script>alert("x")</script> & co');
    }
    expect(mails[0]!.html).not.toContain('<img');
    expect(mails[0]!.html).toContain('&lt;img src=&quot;https://evil.example/x.png&quot;&gt; &#39;hi&#39;');
  });

  it('keeps a title on one line in the subject', () => {
    const m = invite({ request: request({ title: 'Lease\r\nBcc: victim@example.com' }) });
    expect(m.subject).toBe('Please sign: Lease Bcc: victim@example.com');
    expect(m.subject).not.toMatch(/[\r\n]/);
  });

  it('loads nothing from elsewhere: no images, stylesheets or scripts', () => {
    for (const m of [...all(true), ...all(false)]) {
      expect(m.html).not.toMatch(/<(img|link|script|style|iframe)\b|\ssrc\s*=|url\(|@import/i);
      expect(m.html.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(m.text.trim()).not.toBe('');
    }
  });
});
