import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState, validationFailed } from '../../errors.js';
import type { ClientInfo } from '../../model/evidence.js';
import { MAX_AUTH_ATTEMPTS } from '../../model/signature-request.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence } from './records.js';
import { otpHash } from './request-signer-otp.js';
import type { SignerDeps } from './signer-step.js';
import type { Command } from '../command.js';
import { buildSignerView, loadSigningContext } from './signing-session.js';
import type { SignerView } from './signing-session.js';

/**
 * Checks an e-mailed code or a sender-set access code. A wrong code is recorded (and counts toward the
 * lock-out after 5) in its own commit before the refusal is answered; the right one records
 * `signer.authenticated` and opens the documents to this recipient.
 */
export const authenticateSigner =
  (deps: SignerDeps) =>
  (token: string, code: string, client: ClientInfo): TE.TaskEither<DomainError, SignerView> =>
    pipe(deps.uow.transaction(authenticateSignerCommand(deps)(token, code, client)), TE.chainW(TE.fromEither));

/**
 * `authenticateSigner` as a command, for a transaction of the caller's (an Idempotency-Key's record beside it). A
 * wrong code is a refusal the command commits (the failed attempt counts): the inner Left. A Left of the command
 * itself commits nothing.
 */
export const authenticateSignerCommand =
  (deps: Pick<SignerDeps, 'clock' | 'crypto' | 'ids'>) =>
  (token: string, code: string, client: ClientInfo): Command<E.Either<DomainError, SignerView>> =>
  (tx) =>
    pipe(
      loadSigningContext(tx, deps, token, true),
      TE.chainW(({ request, recipient }): TE.TaskEither<DomainError, E.Either<DomainError, void>> => {
        const now = deps.clock.now();
        const at = now.toISOString();
        if (recipient.authFailures >= MAX_AUTH_ATTEMPTS) return TE.left(invalidState('Too many failed attempts; identification is locked.'));
        const expected =
          recipient.authentication === 'access_code'
            ? recipient.accessCodeHash
            : recipient.otp !== null && recipient.otp.expiresAt > at
              ? recipient.otp.codeHash
              : null;
        const given = recipient.authentication === 'access_code' ? deps.crypto.sha256Hex(`${request.id}:${code}`) : otpHash(deps, recipient.id, code);
        if (expected !== null && deps.crypto.timingSafeEqual(expected, given))
          return pipe(
            applyCommand(tx, request, { type: 'Authenticate', recipientId: recipient.id }, now),
            TE.chainW((r) => appendEvent(tx, deps.ids, r, 'signer.authenticated', at, { recipient_id: recipient.id, method: recipient.authentication, authenticated_at: at })),
            TE.chainW(() => appendEvidence(tx, deps.ids, request, 'authenticated', at, recipient.id, client, { method: recipient.authentication })),
            TE.map(() => E.right(undefined)),
          );
        // Commit the failed attempt, then refuse: rolling back would let a guesser try for ever.
        const left = MAX_AUTH_ATTEMPTS - recipient.authFailures - 1;
        const why = expected === null && recipient.authentication === 'email_otp' ? 'No valid code is pending; ask for a new one.' : 'The code is not correct.';
        return pipe(
          applyCommand(tx, request, { type: 'FailAuthentication', recipientId: recipient.id }, now),
          TE.chainW(() => appendEvidence(tx, deps.ids, request, 'authentication_failed', at, recipient.id, client)),
          TE.map(() =>
            E.left(
              left > 0
                ? validationFailed([{ path: 'code', message: `${why} ${left} attempt(s) left.` }], `${why} ${left} attempt(s) left.`)
                : invalidState('Too many failed attempts; identification is locked.'),
            ),
          ),
        );
      }),
      // The view of what was committed, read in the same transaction: the signer's documents once identified.
      TE.chainW((outcome): TE.TaskEither<DomainError, E.Either<DomainError, SignerView>> =>
        E.isLeft(outcome)
          ? TE.right(outcome)
          : pipe(
              loadSigningContext(tx, deps, token),
              TE.chainW((ctx) => buildSignerView(tx, ctx)),
              TE.map((view) => E.right(view)),
            ),
      ),
    );
