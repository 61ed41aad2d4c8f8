import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { MailMessage } from '../model/mail.js';

export interface MailFailure {
  readonly _tag: 'MailFailure';
  /** True when retrying cannot help (the address was refused for good). */
  readonly permanent: boolean;
  readonly detail: string;
}

/** Sends one message. Right means an SMTP server (or the test mailbox) accepted it. */
export interface MailTransport {
  send(message: MailMessage): TaskEither<MailFailure, void>;
}
