import * as E from 'fp-ts/lib/Either.js';
import type { MailMessage, MailTransport } from '@esig/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** A message as the far side of a transport holds it. */
export interface DeliveredMail {
  /** Every address it was delivered to. */
  readonly to: readonly string[];
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** With its angle brackets (`<id@host>`). */
  readonly messageId: string;
}

export interface MailTransportHarness {
  readonly transport: MailTransport;
  /** What has arrived on the far side (an SMTP server, a mailbox), in arrival order. */
  delivered(): Promise<readonly DeliveredMail[]>;
  cleanup(): Promise<void>;
}

const message = (n: number, over: Partial<MailMessage> = {}): MailMessage => ({
  to: `signer${n}@example.com`,
  subject: `Please sign: Lease nº ${n} — “Müller & Søn” ✓`,
  text: `Hello,\n\nplease sign the lease ${n}.\nhttps://sign.example.com/sign/${'A'.repeat(43)}\n`,
  html: `<p>Hello,</p><p>please sign the <b>lease ${n}</b> — ✓</p>`,
  messageId: `<job_${n}@esig>`,
  ...over,
});

/**
 * The MailTransport port's contract: a message that `send` answered Right for has arrived, once, to exactly
 * its one address, with its subject, text, HTML and Message-ID as given (non-ASCII included). Run it against
 * any transport with a harness that can see what arrived (a test SMTP server, a mailbox store).
 */
export const describeMailTransportContract = (name: string, makeHarness: () => Promise<MailTransportHarness>): void => {
  describe(`mail transport contract: ${name}`, () => {
    let h: MailTransportHarness;
    beforeEach(async () => {
      h = await makeHarness();
    });
    afterEach(async () => h.cleanup());

    const send = async (m: MailMessage) => {
      const r = await h.transport.send(m)();
      expect(r, JSON.stringify(r)).toEqual(E.right(undefined));
    };

    it('delivers a sent message once, to exactly its address, with every part as given', async () => {
      const m = message(1);
      await send(m);
      const got = await h.delivered();
      expect(got).toHaveLength(1);
      expect(got[0]).toEqual({ to: [m.to], subject: m.subject, text: m.text, html: m.html, messageId: m.messageId });
    });

    it('keeps messages apart: each arrives to its own recipient under its own Message-ID', async () => {
      const ms = [message(1), message(2), message(3, { to: 'o.brien+esig@example.co.uk' })];
      for (const m of ms) await send(m);
      const got = await h.delivered();
      expect(got.map((g) => [g.to, g.messageId])).toEqual(ms.map((m) => [[m.to], m.messageId]));
    });

    it('carries long lines and a long subject without losing a character', async () => {
      const m = message(4, { subject: `${'Vertrag '.repeat(30)}Ende`, text: `${'x'.repeat(2000)}\nend\n` });
      await send(m);
      const [got] = await h.delivered();
      expect([got!.subject, got!.text]).toEqual([m.subject, m.text]);
    });
  });
};
