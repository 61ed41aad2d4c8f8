import type { MailMessage } from '../model/mail.js';
import { OTP_TTL_MS, type Recipient, type SignatureRequest } from '../model/signature-request.js';
import { formatUtc, oneLine, renderHtml, renderText, subjectFor, type MailBlock, type MailLayout } from './render.js';

/**
 * The mails esig sends, as pure functions from the request to a rendered `MailMessage` (text and HTML
 * with the same content). Titles, names and the sender's message are user input: the HTML part escapes
 * every one of them, and the subject keeps them on one line. Links are used exactly as given; no mail
 * carries an attachment, an image or a stylesheet from elsewhere.
 *
 * `to` is always the recipient's address: keeping test-mode mail away from real recipients is the
 * job of the transport chosen for the mode (the test SMTP server or the test mailbox), not of a template.
 */

interface MailInputBase {
  readonly request: SignatureRequest;
  readonly recipient: Recipient;
  /** Test mode: `[TEST] ` before the subject and "TEST — not legally binding" in the body. */
  readonly testMode: boolean;
  /** Stable per job (see `MailMessage.messageId`). */
  readonly messageId: string;
}

export interface InvitationMailInput extends MailInputBase {
  /** The recipient's personal signing link. */
  readonly link: string;
  /** A reminder of an invitation already sent, rather than the first one. */
  readonly reminder: boolean;
}

export interface CompletedMailInput extends MailInputBase {
  /** Where the finished document can be fetched; the document itself is never attached. */
  readonly link: string;
}

export interface OtpMailInput extends MailInputBase {
  /** The one-time code, as the recipient must type it. */
  readonly code: string;
}

const greeting = (recipient: Recipient): MailBlock => {
  const name = oneLine(recipient.firstName);
  return { kind: 'paragraph', text: name === '' ? 'Hello,' : `Hello ${name},` };
};

const quoted = (title: string): string => `“${oneLine(title)}”`;

const render = (input: MailInputBase, layout: Omit<MailLayout, 'testMode'>): MailMessage => {
  const full: MailLayout = { ...layout, testMode: input.testMode, subject: subjectFor(input.testMode, layout.subject) };
  return {
    to: input.recipient.email,
    subject: full.subject,
    text: renderText(full),
    html: renderHtml(full),
    messageId: input.messageId,
  };
};

const PERSONAL_LINK = 'This link is personal to you: please do not forward this e-mail.';

/** Asks a signer to sign, or reminds them: the sender's message, the signing button, the expiry date. */
export const invitationMail = (input: InvitationMailInput): MailMessage => {
  const { request, recipient, link, reminder } = input;
  const title = oneLine(request.title);
  const message = request.message?.trim() ?? '';
  return render(input, {
    subject: reminder ? `Reminder: please sign: ${title}` : `Please sign: ${title}`,
    heading: reminder ? `Reminder: please sign ${quoted(title)}` : `Please sign ${quoted(title)}`,
    blocks: [
      greeting(recipient),
      {
        kind: 'paragraph',
        text: reminder
          ? `This is a reminder that ${quoted(title)} is still waiting for your signature.`
          : `You have been asked to review and sign ${quoted(title)}.`,
      },
      ...(message === '' ? [] : [{ kind: 'quote', label: 'Message from the sender:', text: message } as const]),
      { kind: 'button', label: 'Review and sign', href: link },
      ...(request.expiresAt === null
        ? []
        : [{ kind: 'paragraph', text: `This request expires on ${formatUtc(request.expiresAt)}.` } as const]),
    ],
    footer: PERSONAL_LINK,
  });
};

/** Tells a recipient that everyone has signed, with a link to the finished document (never an attachment). */
export const completedMail = (input: CompletedMailInput): MailMessage => {
  const { request, recipient, link } = input;
  const title = oneLine(request.title);
  return render(input, {
    subject: `Completed: ${title}`,
    heading: `${quoted(title)} is complete`,
    blocks: [
      greeting(recipient),
      { kind: 'paragraph', text: `Everyone has signed ${quoted(title)}. The request is complete.` },
      { kind: 'paragraph', text: 'The finished document, with its evidence certificate, is available at the link below.' },
      { kind: 'button', label: 'View the finished document', href: link },
    ],
    footer: PERSONAL_LINK,
  });
};

const OTP_MINUTES = Math.round(OTP_TTL_MS / 60_000);

/** The e-mailed identification code for `email_otp` recipients. */
export const otpMail = (input: OtpMailInput): MailMessage => {
  const { request, recipient, code } = input;
  const title = oneLine(request.title);
  return render(input, {
    subject: `Your verification code for: ${title}`,
    heading: 'Your verification code',
    blocks: [
      greeting(recipient),
      { kind: 'paragraph', text: `Use this code to confirm your identity before signing ${quoted(title)}:` },
      { kind: 'code', code },
      { kind: 'paragraph', text: `The code is valid for ${OTP_MINUTES} minutes.` },
    ],
    footer: 'If you did not ask for this code, you can ignore this e-mail. Never share the code with anyone.',
  });
};
