import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { Principal } from '../model/principal.js';
import type { AuthenticationMethod, Recipient, RecipientRole } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { Crypto } from '../ports/crypto.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Command } from './command.js';
import { applyCommand, check, loadRequest, requireScope } from './policy.js';
import { unstorableText } from '../storable-text.js';

export interface AddRecipientInput {
  readonly email: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly role?: RecipientRole;
  readonly order?: number;
  readonly authentication?: AuthenticationMethod;
  /** Required with `authentication: access_code`; stored only as a hash. */
  readonly accessCode?: string;
}

/**
 * A conservative structural check, for callers of the core that have no validator of their own (the HTTP
 * adapter checks addresses with validator.js first): one @, something on each side, a dot in the domain, and
 * nothing that could make a mail header name more than one mailbox (no spaces, commas, semicolons, angle
 * brackets, quotes or control characters).
 */
export const looksLikeEmail = (s: string): boolean => /^[^\s@,;<>()"\\\u0000-\u001f\u007f]+@[^\s@,;<>()"\\\u0000-\u001f\u007f]+\.[^\s@,;<>()"\\\u0000-\u001f\u007f]+$/.test(s) && s.length <= 254;

/**
 * Adds a recipient to a DRAFT request (added after sending is an invalid state).
 *
 * @example
 * const ada = await execute(deps)(addRecipient(deps)(me, requestId, { email: 'ada@example.com', firstName: 'Ada', lastName: 'Lovelace', authentication: 'email_otp' }))();
 */
export const addRecipient =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly crypto: Crypto }) =>
  (p: Principal, requestId: string, input: AddRecipientInput): Command<Recipient> =>
  (tx) => {
    const authentication = input.authentication ?? 'none';
    return pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() =>
        check([
          unstorableText(input),
          looksLikeEmail(input.email) ? null : { path: 'email', message: 'must be an e-mail address' },
          input.firstName.trim().length === 0 ? { path: 'firstName', message: 'must not be empty' } : null,
          input.lastName.trim().length === 0 ? { path: 'lastName', message: 'must not be empty' } : null,
          authentication === 'access_code' && (input.accessCode ?? '').length < 4
            ? { path: 'accessCode', message: 'is required (at least 4 characters) with access_code authentication' }
            : null,
          authentication !== 'access_code' && input.accessCode !== undefined
            ? { path: 'accessCode', message: 'is only allowed with access_code authentication' }
            : null,
        ]),
      ),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) => {
        const recipient: Recipient = {
          id: deps.ids.next('rcp'),
          email: input.email.trim(),
          firstName: input.firstName.trim(),
          lastName: input.lastName.trim(),
          role: input.role ?? 'signer',
          order: input.order ?? req.recipients.length + 1,
          authentication,
          accessCodeHash: input.accessCode === undefined ? null : deps.crypto.sha256Hex(`${req.id}:${input.accessCode}`),
          status: 'PENDING',
          signedAt: null,
          declinedAt: null,
          declineReason: null,
          authenticatedAt: null,
          otp: null,
          authFailures: 0,
          otpSentAt: [],
          signature: null,
        };
        return pipe(
          applyCommand(tx, req, { type: 'AddRecipient', recipient }, deps.clock.now()),
          TE.map(() => recipient),
        );
      }),
    );
  };
