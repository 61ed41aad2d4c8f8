import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { mailUnavailable } from '../../errors.js';
import { otpMail } from '../../mail/templates.js';
import type { ClientInfo } from '../../model/evidence.js';
import type { Tenant } from '../../model/tenant.js';
import { OTP_TTL_MS } from '../../model/signature-request.js';
import type { MailTransport } from '../../ports/mail-transport.js';
import { applyCommand } from '../policy.js';
import { appendEvidence } from './records.js';
import type { SignerDeps } from './signer-step.js';
import { signerStep } from './signer-step.js';
import { maskEmail } from './signing-session.js';

export const otpHash = (deps: Pick<SignerDeps, 'crypto'>, recipientId: string, code: string): string => deps.crypto.sha256Hex(`otp:${recipientId}:${code}`);


/**
 * Mails a fresh 6-digit code (valid 10 minutes) to an `email_otp` recipient, at most OTP_SEND_LIMIT in
 * OTP_SEND_WINDOW_MS (then `RateLimited` with the wait); a new code lifts a lock-out. The code is stored only as a
 * hash. It is sent right away rather than through the job queue, so it never rests in clear anywhere; if
 * no mail server takes it, the caller asks again (a new code replaces the old).
 */
export const requestSignerOtp =
  (deps: SignerDeps & { readonly mail: (tenant: Tenant) => MailTransport; readonly publicUrl: string }) =>
  (token: string, client: ClientInfo): TE.TaskEither<DomainError, { readonly sentTo: string }> => {
    const code = deps.crypto.randomDigits(6);
    let target: { email: string; tenant: Tenant; message: ReturnType<typeof otpMail> } | null = null;
    return pipe(
      signerStep(deps)(token, (tx, { request, recipient, tenant }, now) => {
        const at = now.toISOString();
        target = {
          email: recipient.email,
          tenant,
          message: otpMail({ request, recipient, code, testMode: request.mode === 'test', messageId: `<${deps.ids.next('mail')}@esig>` }),
        };
        return pipe(
          applyCommand(tx, request, { type: 'IssueOtp', recipientId: recipient.id, codeHash: otpHash(deps, recipient.id, code), expiresAt: new Date(now.getTime() + OTP_TTL_MS).toISOString() }, now),
          TE.chainW(() => appendEvidence(tx, deps.ids, request, 'otp_sent', at, recipient.id, client)),
        );
      }),
      TE.chainW(() => {
        const t = target!;
        return pipe(
          deps.mail(t.tenant).send(t.message),
          // The signer learns that the code did not go out, not what the mail server or the connection to it said.
          TE.mapLeft((e): DomainError => mailUnavailable('The code could not be sent just now; ask for a new one in a few minutes.', e.detail)),
          TE.map(() => ({ sentTo: maskEmail(t.email) })),
        );
      }),
    );
  };
