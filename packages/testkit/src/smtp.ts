import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/** One message as the server received it. */
export interface ReceivedMail {
  /** The first From header address as `Name <address>`, decoded; the envelope sender is `envelopeFrom`. */
  readonly from: string;
  /** The envelope recipients (RCPT TO): who this server actually delivered the message to. */
  readonly to: readonly string[];
  readonly envelopeFrom: string;
  readonly subject: string;
  readonly text: string;
  /** The HTML part; empty when the message had none. */
  readonly html: string;
  /** As in the header, angle brackets included (`<id@host>`). */
  readonly messageId: string;
  /** Raw header values by lower-case name, folded lines joined; the last one wins when a name repeats. */
  readonly headers: Readonly<Record<string, string>>;
  /** The whole message as received. */
  readonly raw: string;
}

export interface TestSmtpServer {
  /** `smtp://127.0.0.1:<port>`, ready for nodemailer. */
  readonly url: string;
  readonly port: number;
  /** Everything received so far, in arrival order. */
  readonly messages: readonly ReceivedMail[];
  /** The first message (received already or later) matching `predicate`; rejects after `timeoutMs`. */
  waitFor(predicate: (m: ReceivedMail) => boolean, timeoutMs?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export interface TestSmtpServerOptions {
  /** RCPT TO of a matching address is refused with `550` (a permanent failure). */
  readonly rejectRecipients?: RegExp;
}

/** `Name <address>` (decoded, unquoted), or the bare address when there is no name. */
const displayAddress = (a: { name?: string; address?: string } | undefined): string =>
  a === undefined ? '' : a.name ? `${a.name} <${a.address ?? ''}>` : (a.address ?? '');

const headerMap = (lines: ReadonlyArray<{ key: string; line: string }>): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const { key, line } of lines) {
    const colon = line.indexOf(':');
    out[key.toLowerCase()] = line.slice(colon + 1).replace(/\r?\n[ \t]+/g, ' ').trim();
  }
  return out;
};

/**
 * A real SMTP server on 127.0.0.1 (a free port), without AUTH or STARTTLS, that parses and keeps every
 * message it accepts. A message is stored before the server answers the final `250`, so once a client's
 * send has succeeded, the message is already in `messages`.
 */
export const startSmtpServer = async (opts: TestSmtpServerOptions = {}): Promise<TestSmtpServer> => {
  const messages: ReceivedMail[] = [];
  const waiters = new Set<(m: ReceivedMail) => void>();

  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    logger: false,
    onRcptTo(address, _session, callback) {
      // search() ignores lastIndex, so a /g pattern answers the same for every address.
      if (opts.rejectRecipients && address.address.search(opts.rejectRecipients) >= 0) {
        const err = Object.assign(new Error(`5.1.1 <${address.address}>: mailbox unavailable`), { responseCode: 550 });
        return callback(err);
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('error', (e: Error) => callback(e));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            const envelopeFrom = session.envelope.mailFrom ? session.envelope.mailFrom.address : '';
            const mail: ReceivedMail = {
              from: displayAddress(parsed.from?.value[0]),
              to: session.envelope.rcptTo.map((a) => a.address),
              envelopeFrom,
              subject: parsed.subject ?? '',
              text: parsed.text ?? '',
              html: typeof parsed.html === 'string' ? parsed.html : '',
              messageId: parsed.messageId ?? '',
              headers: headerMap(parsed.headerLines),
              raw: raw.toString('utf8'),
            };
            messages.push(mail);
            for (const w of [...waiters]) w(mail);
            callback();
          },
          (e: unknown) => callback(e instanceof Error ? e : new Error(String(e))),
        );
      });
    },
  });

  const netServer = await new Promise<ReturnType<SMTPServer['listen']>>((resolve, reject) => {
    server.once('error', reject);
    const s = server.listen(0, '127.0.0.1', () => {
      server.off('error', reject);
      // A client that vanishes mid-session (a worker killed with SIGKILL while sending) surfaces here as
      // ECONNRESET; without a listener it would be an uncaught exception in the test process. The message
      // was not accepted, which is what a real server would conclude too.
      server.on('error', () => undefined);
      resolve(s);
    });
  });
  const { port } = netServer.address() as AddressInfo;

  const waitFor = (predicate: (m: ReceivedMail) => boolean, timeoutMs = 5_000): Promise<ReceivedMail> =>
    new Promise((resolve, reject) => {
      const found = messages.find(predicate);
      if (found) return resolve(found);
      const timer = setTimeout(() => {
        waiters.delete(waiter);
        const seen = messages.map((m) => `${m.to.join(',')}: ${m.subject}`).join('; ') || 'none';
        reject(new Error(`no matching mail within ${timeoutMs} ms (received: ${seen})`));
      }, timeoutMs);
      const waiter = (m: ReceivedMail) => {
        if (!predicate(m)) return;
        clearTimeout(timer);
        waiters.delete(waiter);
        resolve(m);
      };
      waiters.add(waiter);
    });

  return {
    url: `smtp://127.0.0.1:${port}`,
    port,
    get messages() {
      return messages;
    },
    waitFor,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
