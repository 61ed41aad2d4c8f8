import type { Mode } from './tenant.js';

/** A rendered e-mail, ready for a transport. Real multipart: both text and HTML. */
export interface MailMessage {
  readonly to: string;
  readonly subject: string;
  readonly text: string;
  readonly html: string;
  /** Stable per job, so a resend after a crash carries the same Message-ID and can be recognised. */
  readonly messageId: string;
}

/** A test-mode mail kept in the test mailbox instead of being sent. */
export interface StoredMail extends MailMessage {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly createdAt: string;
}
