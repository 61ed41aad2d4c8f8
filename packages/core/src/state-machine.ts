import * as E from 'fp-ts/lib/Either.js';
import type { AdoptedSignature, Field, FieldValue, Recipient, RecipientStatus, RequestStatus, SignatureRequest } from './model/signature-request.js';
import { MAX_AUTH_ATTEMPTS, OTP_SEND_LIMIT, OTP_SEND_WINDOW_MS } from './model/signature-request.js';
import { isTerminal } from './model/signature-request.js';

/**
 * Everything that can happen to a signature request. Ids and times arrive inside the commands so that
 * `transition` stays a pure function of (request, command, now).
 */
export type RequestCommand =
  | { readonly type: 'AddRecipient'; readonly recipient: Recipient }
  | { readonly type: 'AddField'; readonly field: Field }
  | { readonly type: 'Send' }
  | { readonly type: 'Cancel' }
  | { readonly type: 'Notify'; readonly recipientId: string }
  | { readonly type: 'Open'; readonly recipientId: string }
  | { readonly type: 'View'; readonly recipientId: string }
  | {
      readonly type: 'Sign';
      readonly recipientId: string;
      readonly values: Readonly<Record<string, FieldValue>>;
      readonly signature: AdoptedSignature;
    }
  | { readonly type: 'Decline'; readonly recipientId: string; readonly reason: string }
  | { readonly type: 'Expire' }
  /** A new e-mailed code replaces any earlier one. */
  | { readonly type: 'IssueOtp'; readonly recipientId: string; readonly codeHash: string; readonly expiresAt: string }
  | { readonly type: 'FailAuthentication'; readonly recipientId: string }
  | { readonly type: 'Authenticate'; readonly recipientId: string }
  /**
   * The worker stored the finished PDF (of this digest) and the certificate, which names `certificateId` and
   * `completedAt`: only now is the request COMPLETED.
   */
  | { readonly type: 'Seal'; readonly finishedSha256: string; readonly certificateId: string; readonly completedAt: string };

export type TransitionError =
  | { readonly _tag: 'InvalidTransition'; readonly from: RequestStatus; readonly command: RequestCommand['type']; readonly detail: string }
  | { readonly _tag: 'InvalidCommand'; readonly path: string; readonly detail: string }
  /** Allowed, but not this soon: the command may be repeated after `retryAfterS` seconds. */
  | { readonly _tag: 'TooSoon'; readonly retryAfterS: number; readonly detail: string };

const invalidTransition = (r: SignatureRequest, command: RequestCommand['type'], detail: string): TransitionError => ({
  _tag: 'InvalidTransition',
  from: r.status,
  command,
  detail,
});
const invalidCommand = (path: string, detail: string): TransitionError => ({ _tag: 'InvalidCommand', path, detail });

/** What a recipient does through a link (as opposed to the sender and the workers). */
const RECIPIENT_ACTIONS: ReadonlyArray<RequestCommand['type']> = ['Open', 'View', 'Sign', 'Decline', 'IssueOtp', 'FailAuthentication', 'Authenticate'];

/** Recipient statuses in the order they may be reached; a recipient never moves backwards. */
const RECIPIENT_PROGRESS: readonly RecipientStatus[] = ['PENDING', 'NOTIFIED', 'OPENED', 'VIEWED'];

const signers = (r: SignatureRequest) => r.recipients.filter((x) => x.role === 'signer');

/** The signers whose signature is still awaited and whose turn it is (all of them when parallel). */
export const signersDue = (r: SignatureRequest): readonly Recipient[] => {
  const waiting = signers(r).filter((s) => s.status !== 'SIGNED' && s.status !== 'DECLINED');
  if (r.signingOrder === 'parallel' || waiting.length === 0) return waiting;
  const next = Math.min(...waiting.map((s) => s.order));
  return waiting.filter((s) => s.order === next);
};

/** The completion rule: every signer has signed (cc recipients never sign). */
export const allSignersSigned = (r: SignatureRequest): boolean => {
  const s = signers(r);
  return s.length > 0 && s.every((x) => x.status === 'SIGNED');
};

/**
 * Every signer has signed and the worker is producing the finished PDF and the certificate: the request is
 * still SENT (the spec's COMPLETED means the evidence exists) and takes no command but `Seal`. A request
 * stored COMPLETED without its digest (written before COMPLETED waited for the seal) is sealed the same way.
 */
export const awaitingSeal = (r: SignatureRequest): boolean =>
  r.finishedSha256 === null && ((r.status === 'SENT' && allSignersSigned(r)) || r.status === 'COMPLETED');

/** Why a request awaiting its seal refuses what it no longer accepts (cancel, expiry, reminders). */
export const AWAITING_SEAL_DETAIL = 'Every signer has signed; the finished document is being produced.';

const sealing = (r: SignatureRequest, cmd: RequestCommand['type']): TransitionError => invalidTransition(r, cmd, AWAITING_SEAL_DETAIL);

const requireStatus = (r: SignatureRequest, cmd: RequestCommand['type'], ...allowed: RequestStatus[]) =>
  allowed.includes(r.status)
    ? E.right(r)
    : E.left(invalidTransition(r, cmd, `A ${r.status} signature request does not accept ${cmd}.`));

const findActiveSigner = (r: SignatureRequest, cmd: RequestCommand['type'], recipientId: string) => {
  const rec = r.recipients.find((x) => x.id === recipientId);
  if (!rec) return E.left(invalidCommand('recipientId', `Recipient ${recipientId} is not part of this request.`));
  if (rec.role !== 'signer') return E.left(invalidTransition(r, cmd, 'A cc recipient does not sign.'));
  if (rec.status === 'SIGNED' || rec.status === 'DECLINED')
    return E.left(invalidTransition(r, cmd, `The recipient has already ${rec.status === 'SIGNED' ? 'signed' : 'declined'}.`));
  return E.right(rec);
};

const withRecipient = (r: SignatureRequest, rec: Recipient): SignatureRequest => ({
  ...r,
  recipients: r.recipients.map((x) => (x.id === rec.id ? rec : x)),
});

/** Moves a recipient forward to `to`, never back: opening a link twice is not an error and changes nothing. */
const advance = (rec: Recipient, to: RecipientStatus): Recipient =>
  RECIPIENT_PROGRESS.indexOf(rec.status) >= RECIPIENT_PROGRESS.indexOf(to) ? rec : { ...rec, status: to };

const bump = (r: SignatureRequest): SignatureRequest => ({ ...r, version: r.version + 1 });

/**
 * The signature-request state machine: DRAFT → SENT → COMPLETED | DECLINED | EXPIRED | CANCELLED
 * (cancel also from DRAFT). The last signature leaves the request SENT, awaiting its seal (`awaitingSeal`);
 * `Seal` makes it COMPLETED. Returns the next state or why the command is refused; never throws.
 * Terminal states accept no command.
 */
export const transition = (
  r: SignatureRequest,
  cmd: RequestCommand,
  now: Date,
): E.Either<TransitionError, SignatureRequest> => {
  const at = now.toISOString();
  // Past its deadline a request takes no recipient action, even before the expiry job has marked it EXPIRED.
  if (RECIPIENT_ACTIONS.includes(cmd.type) && r.status === 'SENT' && r.expiresAt !== null && r.expiresAt <= at)
    return E.left(invalidTransition(r, cmd.type, `The request expired at ${r.expiresAt}.`));
  switch (cmd.type) {
    case 'AddRecipient':
      return E.map(() => bump({ ...r, recipients: [...r.recipients, cmd.recipient] }))(requireStatus(r, cmd.type, 'DRAFT'));

    case 'AddField': {
      const st = requireStatus(r, cmd.type, 'DRAFT');
      if (E.isLeft(st)) return st;
      const f = cmd.field;
      if (!r.documentIds.includes(f.documentId))
        return E.left(invalidCommand('documentId', `Document ${f.documentId} is not part of this request.`));
      const rec = r.recipients.find((x) => x.id === f.recipientId);
      if (!rec) return E.left(invalidCommand('recipientId', `Recipient ${f.recipientId} is not part of this request.`));
      if (rec.role !== 'signer') return E.left(invalidCommand('recipientId', 'Fields can only be assigned to signers.'));
      return E.right(bump({ ...r, fields: [...r.fields, f] }));
    }

    case 'Send': {
      const st = requireStatus(r, cmd.type, 'DRAFT');
      if (E.isLeft(st)) return st;
      if (r.documentIds.length === 0) return E.left(invalidTransition(r, cmd.type, 'The request has no documents.'));
      const s = signers(r);
      if (s.length === 0) return E.left(invalidTransition(r, cmd.type, 'The request has no signer.'));
      const without = s.filter((x) => !r.fields.some((f) => f.recipientId === x.id && f.type === 'signature'));
      if (without.length > 0)
        return E.left(
          invalidTransition(r, cmd.type, `Every signer needs a signature field; missing for ${without.map((x) => x.id).join(', ')}.`),
        );
      if (r.expiresAt !== null && r.expiresAt <= at)
        return E.left(invalidTransition(r, cmd.type, 'The request expiry lies in the past.'));
      return E.right(bump({ ...r, status: 'SENT', sentAt: at }));
    }

    case 'Cancel':
      if (r.status === 'SENT' && awaitingSeal(r)) return E.left(sealing(r, cmd.type));
      return E.map(() => bump({ ...r, status: 'CANCELLED' as const, cancelledAt: at }))(
        requireStatus(r, cmd.type, 'DRAFT', 'SENT'),
      );

    case 'Notify':
    case 'Open':
    case 'View': {
      const st = requireStatus(r, cmd.type, 'SENT');
      if (E.isLeft(st)) return st;
      const rec = r.recipients.find((x) => x.id === cmd.recipientId);
      if (!rec) return E.left(invalidCommand('recipientId', `Recipient ${cmd.recipientId} is not part of this request.`));
      if (rec.status === 'SIGNED' || rec.status === 'DECLINED') return E.right(r);
      const to: RecipientStatus = cmd.type === 'Notify' ? 'NOTIFIED' : cmd.type === 'Open' ? 'OPENED' : 'VIEWED';
      const next = advance(rec, to);
      return E.right(next === rec ? r : bump(withRecipient(r, next)));
    }

    case 'Sign': {
      const st = requireStatus(r, cmd.type, 'SENT');
      if (E.isLeft(st)) return st;
      const found = findActiveSigner(r, cmd.type, cmd.recipientId);
      if (E.isLeft(found)) return found;
      const rec = found.right;
      if (rec.authentication !== 'none' && rec.authenticatedAt === null)
        return E.left(invalidTransition(r, cmd.type, 'The recipient has not passed identification.'));
      if (!signersDue(r).some((x) => x.id === rec.id))
        return E.left(invalidTransition(r, cmd.type, 'It is not yet this recipient’s turn to sign.'));
      const own = r.fields.filter((f) => f.recipientId === rec.id);
      const foreign = Object.keys(cmd.values).filter((id) => !own.some((f) => f.id === id));
      if (foreign.length > 0) return E.left(invalidCommand(`values.${foreign[0]}`, 'Not a field of this recipient.'));
      // Signature fields take the adopted signature and date fields the signing date; every other field
      // needs its value from the signer.
      const auto = (f: Field) => f.type === 'signature' || f.type === 'date_signed';
      const missing = own.filter((f) => f.required && !auto(f) && !hasValue(cmd.values[f.id]));
      if (missing.length > 0) return E.left(invalidCommand(`values.${missing[0]!.id}`, 'This required field has no value.'));
      const given = Object.keys(cmd.values).filter((id) => own.some((f) => f.id === id && auto(f)));
      if (given.length > 0) return E.left(invalidCommand(`values.${given[0]}`, 'This field is filled automatically.'));
      const fields = r.fields.map((f) =>
        f.recipientId !== rec.id
          ? f
          : { ...f, value: f.type === 'date_signed' ? at.slice(0, 10) : f.type === 'signature' ? true : (cmd.values[f.id] ?? null) },
      );
      if (cmd.signature.value.trim().length === 0) return E.left(invalidCommand('signature.value', 'The signature is empty.'));
      // The last signature too leaves the request SENT: `Seal` completes it once the evidence exists.
      return E.right(bump(withRecipient({ ...r, fields }, { ...rec, status: 'SIGNED', signedAt: at, signature: cmd.signature, otp: null })));
    }

    case 'Decline': {
      const st = requireStatus(r, cmd.type, 'SENT');
      if (E.isLeft(st)) return st;
      const found = findActiveSigner(r, cmd.type, cmd.recipientId);
      if (E.isLeft(found)) return found;
      const rec = { ...found.right, status: 'DECLINED' as const, declinedAt: at, declineReason: cmd.reason };
      return E.right(bump({ ...withRecipient(r, rec), status: 'DECLINED', declinedAt: at }));
    }

    case 'Expire':
      if (r.status === 'SENT' && awaitingSeal(r)) return E.left(sealing(r, cmd.type));
      return E.map(() => bump({ ...r, status: 'EXPIRED' as const, expiredAt: at }))(requireStatus(r, cmd.type, 'SENT'));

    case 'IssueOtp':
    case 'FailAuthentication':
    case 'Authenticate': {
      const st = requireStatus(r, cmd.type, 'SENT');
      if (E.isLeft(st)) return st;
      const found = findActiveSigner(r, cmd.type, cmd.recipientId);
      if (E.isLeft(found)) return found;
      const rec = found.right;
      if (rec.authentication === 'none') return E.left(invalidTransition(r, cmd.type, 'This recipient needs no identification.'));
      if (rec.authenticatedAt !== null) return E.left(invalidTransition(r, cmd.type, 'Identification was already passed.'));
      if (cmd.type === 'IssueOtp') {
        if (rec.authentication !== 'email_otp') return E.left(invalidTransition(r, cmd.type, 'This recipient identifies with an access code.'));
        const recent = rec.otpSentAt.filter((t) => Date.parse(t) > now.getTime() - OTP_SEND_WINDOW_MS);
        if (recent.length >= OTP_SEND_LIMIT) {
          const retryAfterS = Math.max(1, Math.ceil((Date.parse(recent[0]!) + OTP_SEND_WINDOW_MS - now.getTime()) / 1000));
          return E.left({ _tag: 'TooSoon', retryAfterS, detail: `At most ${OTP_SEND_LIMIT} codes are sent in ${OTP_SEND_WINDOW_MS / 60_000} minutes; ask again later.` });
        }
        // Only the real recipient can read the new code, so sending one lifts a lock-out: a guesser gains
        // MAX_AUTH_ATTEMPTS tries per code, against a code it cannot see, at most OTP_SEND_LIMIT codes a window.
        return E.right(bump(withRecipient(r, { ...rec, otp: { codeHash: cmd.codeHash, expiresAt: cmd.expiresAt }, authFailures: 0, otpSentAt: [...recent, at] })));
      }
      if (rec.authFailures >= MAX_AUTH_ATTEMPTS) return E.left(invalidTransition(r, cmd.type, 'Too many failed attempts; identification is locked.'));
      if (cmd.type === 'FailAuthentication') return E.right(bump(withRecipient(r, { ...rec, authFailures: rec.authFailures + 1 })));
      return E.right(bump(withRecipient(r, { ...rec, authenticatedAt: at, otp: null })));
    }

    case 'Seal': {
      if (r.finishedSha256 !== null) return E.left(invalidTransition(r, cmd.type, 'The request is already sealed.'));
      if (!awaitingSeal(r)) return E.left(invalidTransition(r, cmd.type, 'Not every signer has signed.'));
      // A request stored COMPLETED before the seal keeps the id and the time it was given then.
      return E.right(
        bump({
          ...r,
          status: 'COMPLETED',
          completedAt: r.completedAt ?? cmd.completedAt,
          certificateId: r.certificateId ?? cmd.certificateId,
          finishedSha256: cmd.finishedSha256,
        }),
      );
    }
  }
};

const hasValue = (v: FieldValue | undefined): boolean => (typeof v === 'string' ? v.trim().length > 0 : v === true);

export { isTerminal };
