import type { MailFailure, MailMessage, MailTransport } from '@esig/core';
import * as TE from '@esig/core/task-either';
import { pipe } from 'fp-ts/lib/function.js';
import { createTransport } from 'nodemailer';

export interface SmtpTransportOptions {
  /** The From header; default `esig <no-reply@localhost>`. */
  readonly from?: string;
}

export const DEFAULT_FROM = 'esig <no-reply@localhost>';

/**
 * Timeouts, in ms, so a dead or silent server fails a send in seconds instead of nodemailer's minutes.
 * Query parameters of the URL win (`smtp://host:25?socketTimeout=60000`).
 */
export const SMTP_TIMEOUTS = {
  connectionTimeout: 10_000,
  greetingTimeout: 10_000,
  dnsTimeout: 10_000,
  socketTimeout: 30_000,
} as const;

/**
 * Whether an SMTP reply code means the server refused the message for good. Every 5xx does (RFC 5321),
 * except 503 "bad sequence of commands", which is about the session, not the message: the same message
 * goes through on a new connection.
 */
export const isPermanentReply = (responseCode: number): boolean => responseCode >= 500 && responseCode < 600 && responseCode !== 503;

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/**
 * Turns whatever nodemailer threw into a `MailFailure`. Only an SMTP 5xx reply is permanent; connection
 * errors, timeouts and 4xx replies are worth another attempt later.
 */
export const toMailFailure = (e: unknown): MailFailure => {
  const err = (typeof e === 'object' && e !== null ? e : {}) as Record<string, unknown>;
  const responseCode = typeof err.responseCode === 'number' ? err.responseCode : undefined;
  const message = str(err.message) ?? String(e);
  const detail = [str(err.code), responseCode === undefined ? undefined : String(responseCode), str(err.command), str(err.response) ?? message]
    .filter((s): s is string => s !== undefined)
    .join(' ');
  return { _tag: 'MailFailure', permanent: responseCode !== undefined && isPermanentReply(responseCode), detail };
};

/**
 * A `MailTransport` over SMTP, configured by a nodemailer URL (`smtp://user:pass@host:587`,
 * `smtps://user:pass@host:465`): the form `ESIG_SMTP_URL` and `ESIG_TEST_SMTP_URL` take. Each message
 * goes out multipart (text and HTML) with its own `messageId` as Message-ID, so a resend after a crash
 * can be recognised. `close()` releases the transport; call it on shutdown.
 */
export const createSmtpTransport = (url: string, opts: SmtpTransportOptions = {}): MailTransport & { close(): void } => {
  const transporter = createTransport({ ...SMTP_TIMEOUTS, url });
  const from = opts.from ?? DEFAULT_FROM;
  return {
    send: (message: MailMessage) =>
      pipe(
        TE.tryCatch(
          () =>
            transporter.sendMail({
              from,
              to: message.to,
              subject: message.subject,
              text: message.text,
              html: message.html,
              messageId: message.messageId,
            }),
          toMailFailure,
        ),
        TE.map(() => undefined),
      ),
    close: () => transporter.close(),
  };
};
