import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { AdoptedSignature, AuthenticationMethod, FieldValue, RecipientStatus, RequestStatus, SignatureRequest } from '@esig/core';
import type { RequestCommand } from '@esig/core/internal';
import { MAX_AUTH_ATTEMPTS, REQUEST_STATUSES, isTerminal } from '@esig/core';
import { allSignersSigned, transition } from '@esig/core/internal';
import type { CommandSpec } from './arbitraries.js';
import {
  T0,
  TYPED_SIGNATURE,
  baseRequest,
  commandSpecArb,
  draftRequestArb,
  identificationCommandArb,
  identifyingRequestArb,
  sentRequestArb,
  iso,
  recipient,
  stepDelayArb,
  terminalRequestArb,
} from './arbitraries.js';

// ------------------------------------------------------------------ an independent model of the rules

type Done = 'SIGNED' | 'DECLINED' | null;
const PROGRESS: readonly RecipientStatus[] = ['PENDING', 'NOTIFIED', 'OPENED', 'VIEWED'];
/** CONTRACT: five failed identification attempts, then the recipient is locked. */
const LOCKED_AFTER = 5;
/** At most 3 codes mailed to a recipient in 10 minutes. */
const CODES_PER_WINDOW = 3;
const CODE_WINDOW_MS = 10 * 60 * 1000;

interface ModelRecipient {
  readonly id: string;
  readonly role: 'signer' | 'cc';
  readonly order: number;
  readonly auth: AuthenticationMethod;
  progress: number;
  done: Done;
  authenticated: boolean;
  failures: number;
  /** Hash of the pending e-mailed code. */
  otp: string | null;
  /** When codes were issued (ms). */
  codesAt: number[];
  signature: AdoptedSignature | null;
}

interface Model {
  status: RequestStatus;
  version: number;
  readonly documentIds: readonly string[];
  readonly signingOrder: 'parallel' | 'sequential';
  readonly expiresAt: number | null;
  readonly recipients: ModelRecipient[];
  readonly fields: { id: string; recipientId: string; type: string; required: boolean }[];
  certificateId: string | null;
  finishedSha256: string | null;
  nextId: number;
}

/** Situations the generators must reach for the identification and sealing rules to be tested at all. */
const IDENTIFICATION_MILESTONES = [
  'otp issued',
  'locked out',
  'identification refused when locked',
  'sign refused before identification',
  'signed after identification',
  'sealed',
] as const;
const CODE_MILESTONES = ['code refused as too soon', 'locked out', 'unlocked by a new code'] as const;
type Milestone = (typeof IDENTIFICATION_MILESTONES)[number] | (typeof CODE_MILESTONES)[number];

interface Real {
  req: SignatureRequest;
  now: number;
  /** Statuses this run went through, to show that the generators reach every state. */
  readonly seen: Set<RequestStatus>;
  readonly milestones: Set<Milestone>;
}

const modelRecipient = (x: SignatureRequest['recipients'][number]): ModelRecipient => ({
  id: x.id,
  role: x.role,
  order: x.order,
  auth: x.authentication,
  progress: 0,
  done: null,
  authenticated: false,
  failures: 0,
  otp: null,
  codesAt: [],
  signature: null,
});

const modelOf = (r: SignatureRequest): Model => ({
  status: r.status,
  version: r.version,
  documentIds: r.documentIds,
  signingOrder: r.signingOrder,
  expiresAt: r.expiresAt === null ? null : Date.parse(r.expiresAt),
  recipients: r.recipients.map(modelRecipient),
  fields: r.fields.map((f) => ({ id: f.id, recipientId: f.recipientId, type: f.type, required: f.required })),
  certificateId: null,
  finishedSha256: null,
  nextId: 0,
});

const needsIdentification = (x: ModelRecipient) => x.auth !== 'none' && !x.authenticated;

/** Fields that signing fills by itself: the signer gives no value for them. */
const filledBySigning = (f: { readonly type: string }) => f.type === 'signature' || f.type === 'date_signed';

const signersOf = (m: Model) => m.recipients.filter((x) => x.role === 'signer');
const allSignedIn = (m: Model) => signersOf(m).length > 0 && signersOf(m).every((x) => x.done === 'SIGNED');

/** Whose turn it is, computed from the model (not with the core's `signersDue`). */
const dueIn = (m: Model) => {
  const waiting = signersOf(m).filter((s) => s.done === null);
  if (m.signingOrder === 'parallel' || waiting.length === 0) return waiting;
  const first = Math.min(...waiting.map((s) => s.order));
  return waiting.filter((s) => s.order === first);
};

const pick = (m: Model, who: number) => {
  const i = who % (m.recipients.length + 1);
  return i === m.recipients.length ? 'rcp_unknown' : m.recipients[i]!.id;
};

/** A due signer who still has to identify, else any due signer, else an unknown id. */
const pickForIdentification = (m: Model, who: number | 'due') => {
  if (who !== 'due') return pick(m, who);
  const due = dueIn(m);
  return (due.find(needsIdentification) ?? due[0])?.id ?? 'rcp_unknown';
};

/** Turns a generated spec into a concrete command against the current state. */
const resolve = (spec: CommandSpec, m: Model, step: number): RequestCommand => {
  switch (spec.type) {
    case 'AddRecipient':
      return { type: 'AddRecipient', recipient: recipient(`rcp_n${m.nextId++}`, spec.role, spec.order, 'PENDING', spec.authentication) };
    case 'AddField': {
      const documentId = spec.doc < m.documentIds.length ? m.documentIds[spec.doc]! : 'doc_unknown';
      return {
        type: 'AddField',
        field: {
          id: `fld_n${m.nextId++}`,
          documentId,
          recipientId: pick(m, spec.who),
          type: spec.fieldType,
          page: 1,
          x: 0,
          y: 0,
          width: 10,
          height: 10,
          required: spec.required,
          value: null,
        },
      };
    }
    case 'Send':
    case 'Cancel':
    case 'Expire':
      return { type: spec.type };
    case 'Notify':
    case 'Open':
    case 'View':
      return { type: spec.type, recipientId: pick(m, spec.who) };
    case 'Decline':
      return { type: 'Decline', recipientId: pick(m, spec.who), reason: spec.reason };
    case 'Sign': {
      const due = dueIn(m);
      const recipientId = spec.who === 'due' ? (due[step % Math.max(1, due.length)]?.id ?? 'rcp_unknown') : pick(m, spec.who);
      const mine = m.fields.filter((f) => f.recipientId === recipientId);
      const own = mine.filter((f) => !filledBySigning(f));
      const values: Record<string, FieldValue> = {};
      for (const f of own) values[f.id] = f.type === 'checkbox' ? true : 'Ada Lovelace';
      const firstRequired = own.find((f) => f.required);
      if (spec.fill === 'omitRequired' && firstRequired) delete values[firstRequired.id];
      if (spec.fill === 'blank' && firstRequired) values[firstRequired.id] = firstRequired.type === 'checkbox' ? false : '   ';
      if (spec.fill === 'foreign') values.fld_foreign = 'x';
      const automatic = mine.find(filledBySigning);
      if (spec.fill === 'autoGiven' && automatic) values[automatic.id] = 'Ada Lovelace';
      const signature: AdoptedSignature =
        spec.fill === 'noSignature'
          ? { kind: spec.signatureKind, value: ' \n ' }
          : spec.signatureKind === 'typed'
            ? TYPED_SIGNATURE
            : { kind: 'drawn', value: `data:image/png;base64,iVBORw0KGgo${step}` };
      return { type: 'Sign', recipientId, values, signature };
    }
    case 'IssueOtp':
      return { type: 'IssueOtp', recipientId: pickForIdentification(m, spec.who), codeHash: `otp_hash_${m.nextId++}`, expiresAt: iso(T0 + step) };
    case 'FailAuthentication':
    case 'Authenticate':
      return { type: spec.type, recipientId: pickForIdentification(m, spec.who) };
    case 'Seal':
      return { type: 'Seal', finishedSha256: `sha256_${step}`, certificateId: `coc_${step}`, completedAt: iso(T0 + step) };
  }
};

const filled = (v: FieldValue | undefined) => (typeof v === 'string' ? v.trim() !== '' : v === true);

/** The model's verdict: whether the command is accepted, and what it changes. */
const decide = (m: Model, cmd: RequestCommand, now: number): { accept: boolean; apply: () => void } => {
  const reject = { accept: false, apply: () => undefined };
  const bumped = (f: () => void) => ({
    accept: true,
    apply: () => {
      f();
      m.version++;
    },
  });
  const rec = 'recipientId' in cmd ? m.recipients.find((x) => x.id === cmd.recipientId) : undefined;
  // Past the deadline, no recipient acts, whether or not the expiry job has run yet.
  const recipientAction = ['Open', 'View', 'Sign', 'Decline', 'IssueOtp', 'FailAuthentication', 'Authenticate'].includes(cmd.type);
  if (recipientAction && m.status === 'SENT' && m.expiresAt !== null && m.expiresAt <= now) return reject;
  switch (cmd.type) {
    case 'AddRecipient':
      if (m.status !== 'DRAFT') return reject;
      return bumped(() => m.recipients.push(modelRecipient(cmd.recipient)));
    case 'AddField': {
      const target = m.recipients.find((x) => x.id === cmd.field.recipientId);
      if (m.status !== 'DRAFT' || !m.documentIds.includes(cmd.field.documentId) || target?.role !== 'signer') return reject;
      return bumped(() => m.fields.push({ id: cmd.field.id, recipientId: target.id, type: cmd.field.type, required: cmd.field.required }));
    }
    case 'Send': {
      const s = signersOf(m);
      const ok =
        m.status === 'DRAFT' &&
        m.documentIds.length > 0 &&
        s.length > 0 &&
        s.every((x) => m.fields.some((f) => f.recipientId === x.id && f.type === 'signature')) &&
        (m.expiresAt === null || m.expiresAt > now);
      return ok ? bumped(() => (m.status = 'SENT')) : reject;
    }
    // Once every signer has signed, only the seal moves the request on: no cancel, no expiry.
    case 'Cancel':
      return m.status === 'DRAFT' || (m.status === 'SENT' && !allSignedIn(m)) ? bumped(() => (m.status = 'CANCELLED')) : reject;
    case 'Expire':
      return m.status === 'SENT' && !allSignedIn(m) ? bumped(() => (m.status = 'EXPIRED')) : reject;
    case 'Notify':
    case 'Open':
    case 'View': {
      if (m.status !== 'SENT' || !rec) return reject;
      const to = cmd.type === 'Notify' ? 1 : cmd.type === 'Open' ? 2 : 3;
      if (rec.done !== null || rec.progress >= to) return { accept: true, apply: () => undefined };
      return bumped(() => (rec.progress = to));
    }
    case 'Sign': {
      if (m.status !== 'SENT' || !rec || rec.role !== 'signer' || rec.done !== null) return reject;
      if (needsIdentification(rec)) return reject;
      if (!dueIn(m).includes(rec)) return reject;
      const own = m.fields.filter((f) => f.recipientId === rec.id);
      if (Object.keys(cmd.values).some((id) => !own.some((f) => f.id === id))) return reject;
      if (own.some((f) => f.required && !filledBySigning(f) && !filled(cmd.values[f.id]))) return reject;
      if (own.some((f) => filledBySigning(f) && f.id in cmd.values)) return reject;
      if (cmd.signature.value.trim() === '') return reject;
      // The last signature too leaves the request SENT, awaiting its seal.
      return bumped(() => {
        rec.done = 'SIGNED';
        rec.signature = cmd.signature;
        rec.otp = null;
      });
    }
    case 'Decline':
      if (m.status !== 'SENT' || !rec || rec.role !== 'signer' || rec.done !== null) return reject;
      return bumped(() => {
        rec.done = 'DECLINED';
        m.status = 'DECLINED';
      });
    case 'IssueOtp':
    case 'FailAuthentication':
    case 'Authenticate': {
      if (m.status !== 'SENT' || !rec || rec.role !== 'signer' || rec.done !== null) return reject;
      if (!needsIdentification(rec)) return reject;
      if (cmd.type === 'IssueOtp') {
        // A new code, read only by the real recipient, lifts a lock-out; a recipient gets at most 3 a window.
        const recent = rec.codesAt.filter((t) => t > now - CODE_WINDOW_MS);
        if (rec.auth !== 'email_otp' || recent.length >= CODES_PER_WINDOW) return reject;
        return bumped(() => {
          rec.otp = cmd.codeHash;
          rec.failures = 0;
          rec.codesAt = [...recent, now];
        });
      }
      if (rec.failures >= LOCKED_AFTER) return reject;
      if (cmd.type === 'FailAuthentication') return bumped(() => rec.failures++);
      return bumped(() => {
        rec.authenticated = true;
        rec.otp = null;
      });
    }
    case 'Seal':
      return m.status === 'SENT' && allSignedIn(m)
        ? bumped(() => {
            m.status = 'COMPLETED';
            m.certificateId = cmd.certificateId;
            m.finishedSha256 = cmd.finishedSha256;
          })
        : reject;
  }
};

// ------------------------------------------------------------------ invariants that hold for any step

const RANK: Record<RecipientStatus, number> = { PENDING: 0, NOTIFIED: 1, OPENED: 2, VIEWED: 3, SIGNED: 4, DECLINED: 4 };
const NEXT_STATUSES: Record<RequestStatus, readonly RequestStatus[]> = {
  DRAFT: ['DRAFT', 'SENT', 'CANCELLED'],
  SENT: ['SENT', 'COMPLETED', 'DECLINED', 'EXPIRED', 'CANCELLED'],
  // Only a request stored COMPLETED before COMPLETED waited for the seal takes a command (Seal, which keeps it).
  COMPLETED: ['COMPLETED'],
  DECLINED: [],
  EXPIRED: [],
  CANCELLED: [],
};

const withoutVersion = (r: SignatureRequest) => ({ ...r, version: 0 });

/**
 * Terminal states are terminal: from one the status never changes, and the only command ever accepted is
 * Seal, once, from a COMPLETED request stored without its digest (before COMPLETED waited for the seal).
 */
const checkTerminal = (prev: SignatureRequest, cmd: RequestCommand, result: E.Either<unknown, SignatureRequest>) => {
  if (!isTerminal(prev.status) || E.isLeft(result)) return;
  expect(cmd.type, `${prev.status} accepted ${cmd.type}`).toBe('Seal');
  expect(prev.status, 'Seal accepted outside COMPLETED').toBe('COMPLETED');
  expect(prev.finishedSha256, 'Seal accepted twice').toBeNull();
  expect(result.right.status).toBe(prev.status);
};

/** Checks everything the brief promises about one accepted or refused step. */
const checkStep = (prev: SignatureRequest, cmd: RequestCommand, result: E.Either<unknown, SignatureRequest>) => {
  checkTerminal(prev, cmd, result);
  if (E.isLeft(result)) return;
  const next = result.right;
  expect(REQUEST_STATUSES).toContain(next.status);
  expect(NEXT_STATUSES[prev.status]).toContain(next.status);

  // The version moves by exactly one when anything changed, and not at all otherwise.
  const changed = JSON.stringify(withoutVersion(next)) !== JSON.stringify(withoutVersion(prev));
  expect(next.version).toBe(changed ? prev.version + 1 : prev.version);

  // Recipients never disappear and never move backwards; a finished recipient stays as it is.
  expect(next.recipients.length).toBeGreaterThanOrEqual(prev.recipients.length);
  prev.recipients.forEach((before, i) => {
    const after = next.recipients[i]!;
    expect(after.id).toBe(before.id);
    expect(RANK[after.status]).toBeGreaterThanOrEqual(RANK[before.status]);
    if (before.status === 'SIGNED' || before.status === 'DECLINED') expect(after.status).toBe(before.status);
  });

  // cc recipients never sign nor decline.
  for (const x of next.recipients) if (x.role === 'cc') expect(['SIGNED', 'DECLINED']).not.toContain(x.status);

  // COMPLETED iff every signer signed and the evidence exists (the spec's meaning): the seal makes it so, and
  // the certificate id and the completion time come with it.
  const signers = next.recipients.filter((x) => x.role === 'signer');
  const allSigned = signers.length > 0 && signers.every((x) => x.status === 'SIGNED');
  expect(next.status === 'COMPLETED').toBe(allSigned && next.finishedSha256 !== null);
  expect(next.certificateId !== null).toBe(next.status === 'COMPLETED');
  if (next.status === 'COMPLETED' && prev.status !== 'COMPLETED') {
    expect(cmd.type).toBe('Seal');
    expect([next.certificateId, next.completedAt]).toEqual(cmd.type === 'Seal' ? [cmd.certificateId, cmd.completedAt] : []);
  }
  // Awaiting its seal, a request takes no command that changes it but the seal, and a cc recipient's
  // progress through the link (notified, opened, viewed).
  if (prev.status === 'SENT' && allSignersSigned(prev) && cmd.type !== 'Seal' && JSON.stringify(next) !== JSON.stringify(prev)) {
    expect(['Notify', 'Open', 'View']).toContain(cmd.type);
    expect('recipientId' in cmd && prev.recipients.find((x) => x.id === cmd.recipientId)?.role).toBe('cc');
    expect(next.status).toBe('SENT');
  }

  // Each end state has its timestamp, and only it.
  expect(next.completedAt !== null).toBe(next.status === 'COMPLETED');
  expect(next.declinedAt !== null).toBe(next.status === 'DECLINED');
  expect(next.expiredAt !== null).toBe(next.status === 'EXPIRED');
  expect(next.cancelledAt !== null).toBe(next.status === 'CANCELLED');
  if (next.status !== 'DRAFT' && next.status !== 'CANCELLED') expect(next.sentAt).not.toBeNull();

  if (cmd.type === 'Send') {
    const s = prev.recipients.filter((x) => x.role === 'signer');
    expect(s.length).toBeGreaterThanOrEqual(1);
    for (const x of s) expect(prev.fields.some((f) => f.recipientId === x.id && f.type === 'signature')).toBe(true);
  }
  if (cmd.type === 'Sign') {
    const me = prev.recipients.find((x) => x.id === cmd.recipientId)!;
    expect(me.role).toBe('signer');
    // The signer's fields take their values; signature fields are marked signed, dates get the signing day.
    next.fields.forEach((f, i) => {
      if (f.recipientId !== me.id) expect(f).toEqual(prev.fields[i]);
      else if (f.type === 'signature') expect(f.value).toBe(true);
      else if (f.type === 'date_signed') expect(f.value).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      else expect(f.value).toEqual(cmd.values[f.id] ?? null);
    });
    if (prev.signingOrder === 'sequential')
      for (const x of prev.recipients)
        if (x.role === 'signer' && x.order < me.order) expect(x.status, 'an earlier signer has not signed yet').toBe('SIGNED');
  }
  if (cmd.type === 'Decline') {
    expect(next.status).toBe('DECLINED');
    expect(next.recipients.find((x) => x.id === cmd.recipientId)!.status).toBe('DECLINED');
  }

  // Sealing: only a completed request carries a finished digest, set once by Seal and never changed.
  if (next.finishedSha256 !== null) expect(next.status).toBe('COMPLETED');
  if (prev.finishedSha256 !== null) expect(next.finishedSha256).toBe(prev.finishedSha256);
  if (cmd.type === 'Seal')
    expect(next).toEqual({
      ...prev,
      status: 'COMPLETED',
      certificateId: prev.certificateId ?? cmd.certificateId,
      completedAt: prev.completedAt ?? cmd.completedAt,
      finishedSha256: cmd.finishedSha256,
      version: prev.version + 1,
    });
  else expect(next.finishedSha256).toBe(prev.finishedSha256);

  // Identification and the adopted signature.
  prev.recipients.forEach((before, i) => {
    const after = next.recipients[i]!;
    const target = 'recipientId' in cmd && cmd.recipientId === before.id;
    expect(after.authFailures).toBeLessThanOrEqual(MAX_AUTH_ATTEMPTS);
    if (after.authFailures > before.authFailures) {
      expect(target && cmd.type === 'FailAuthentication').toBe(true);
      expect(after.authFailures).toBe(before.authFailures + 1);
    }
    // Only a new code resets the count (and so lifts a lock-out).
    if (after.authFailures < before.authFailures) expect([target && cmd.type, after.authFailures]).toEqual(['IssueOtp', 0]);
    expect(after.otpSentAt.length).toBeLessThanOrEqual(3);
    if (before.authenticatedAt !== null) expect(after.authenticatedAt).toBe(before.authenticatedAt);
    else if (after.authenticatedAt !== null) {
      expect(target && cmd.type === 'Authenticate').toBe(true);
      expect(before.authFailures).toBeLessThan(MAX_AUTH_ATTEMPTS);
      expect(after.otp).toBeNull();
    }
    if (after.authentication === 'none') expect([after.authenticatedAt, after.otp, after.authFailures]).toEqual([null, null, 0]);
    if (after.otp !== null) expect(after.authentication).toBe('email_otp');
    if (after.otp !== null && after.otp !== before.otp) expect(target && cmd.type === 'IssueOtp').toBe(true);
    if (after.status === 'SIGNED' && before.status !== 'SIGNED') {
      expect(after.authentication === 'none' || before.authenticatedAt !== null, 'signed before identification').toBe(true);
      expect(cmd.type === 'Sign' && after.signature).toEqual(cmd.type === 'Sign' && cmd.signature);
      expect(after.signature!.value.trim()).not.toBe('');
    } else expect(after.signature).toEqual(before.signature);
  });
};

// ------------------------------------------------------------------ the fast-check command

class Step implements fc.Command<Model, Real> {
  constructor(
    readonly spec: CommandSpec,
    readonly delayMs: number,
  ) {}

  check = () => true;

  run(m: Model, r: Real): void {
    r.now += this.delayMs;
    const cmd = resolve(this.spec, m, m.version * 100 + m.nextId);
    const prev = r.req;
    // `transition` must never throw: an exception here fails the run (and is shrunk like any failure).
    const result = transition(prev, cmd, new Date(r.now));
    checkStep(prev, cmd, result);

    const target = 'recipientId' in cmd ? m.recipients.find((x) => x.id === cmd.recipientId) : undefined;
    if (cmd.type === 'Sign' && m.status === 'SENT' && target?.done === null && needsIdentification(target) && dueIn(m).includes(target))
      r.milestones.add('sign refused before identification');
    const identification = cmd.type === 'FailAuthentication' || cmd.type === 'Authenticate';
    if (identification && m.status === 'SENT' && target?.done === null && target.failures >= LOCKED_AFTER)
      r.milestones.add('identification refused when locked');
    const wasLocked = target !== undefined && target.failures >= LOCKED_AFTER;
    const verdict = decide(m, cmd, r.now);
    if (cmd.type === 'IssueOtp' && E.isLeft(result) && result.left._tag === 'TooSoon') {
      r.milestones.add('code refused as too soon');
      expect(result.left.retryAfterS).toBeGreaterThan(0);
      expect(result.left.retryAfterS).toBeLessThanOrEqual(600);
    }
    expect(E.isRight(result), `model and state machine disagree on ${cmd.type} from ${prev.status}`).toBe(verdict.accept);
    if (E.isLeft(result)) return;
    verdict.apply();
    r.req = result.right;
    r.seen.add(r.req.status);
    if (cmd.type === 'IssueOtp') r.milestones.add('otp issued');
    if (cmd.type === 'IssueOtp' && wasLocked) r.milestones.add('unlocked by a new code');
    if (target && target.failures >= LOCKED_AFTER) r.milestones.add('locked out');
    if (cmd.type === 'Sign' && target?.auth !== 'none') r.milestones.add('signed after identification');
    if (cmd.type === 'Seal') r.milestones.add('sealed');

    // The real state matches the model.
    expect(r.req.status).toBe(m.status);
    expect(r.req.version).toBe(m.version);
    expect(r.req.certificateId).toBe(m.certificateId);
    expect(r.req.finishedSha256).toBe(m.finishedSha256);
    expect(
      r.req.recipients.map((x) => ({
        id: x.id,
        status: x.status,
        authenticated: x.authenticatedAt !== null,
        failures: x.authFailures,
        otp: x.otp?.codeHash ?? null,
        signature: x.signature,
      })),
    ).toEqual(
      m.recipients.map((x) => ({
        id: x.id,
        status: x.done ?? PROGRESS[x.progress]!,
        authenticated: x.authenticated,
        failures: x.failures,
        otp: x.otp,
        signature: x.signature,
      })),
    );
    expect(r.req.fields.map((f) => f.id)).toEqual(m.fields.map((f) => f.id));
  }

  toString = () => `${JSON.stringify(this.spec)}+${this.delayMs}ms`;
}

const stepArb = fc.tuple(commandSpecArb, stepDelayArb).map(([spec, delay]) => new Step(spec, delay));
const identificationStepArb = fc.tuple(identificationCommandArb, stepDelayArb).map(([spec, delay]) => new Step(spec, delay));

/** Every signer identifies by mailed code; codes and wrong guesses come seconds to minutes apart. */
const codeRequestArb = identifyingRequestArb.map((r) => ({
  ...r,
  recipients: r.recipients.map((x) => (x.role === 'signer' ? { ...x, authentication: 'email_otp' as const } : x)),
}));
const codeStepArb = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.constant<CommandSpec>({ type: 'IssueOtp', who: 'due' }) },
      { weight: 6, arbitrary: fc.constant<CommandSpec>({ type: 'FailAuthentication', who: 'due' }) },
      { weight: 1, arbitrary: fc.constant<CommandSpec>({ type: 'Authenticate', who: 'due' }) },
    ),
    fc.oneof(fc.integer({ min: 0, max: 120_000 }), stepDelayArb),
  )
  .map(([spec, delay]) => new Step(spec, delay));

/** Runs generated sequences against the model; returns in how many runs each status and milestone was reached. */
const runModel = (
  requests: fc.Arbitrary<SignatureRequest>,
  steps: fc.Arbitrary<Step>,
  maxCommands: number,
  numRuns: number,
): Map<RequestStatus | Milestone, number> => {
  const runsReaching = new Map<RequestStatus | Milestone, number>();
  fc.assert(
    fc.property(requests, fc.commands([steps], { maxCommands, size: 'medium' }), (req, cmds) => {
      const real: Real = { req, now: T0, seen: new Set([req.status]), milestones: new Set() };
      fc.modelRun(() => ({ model: modelOf(req), real }), cmds);
      for (const s of [...real.seen, ...real.milestones]) runsReaching.set(s, (runsReaching.get(s) ?? 0) + 1);
    }),
    { numRuns },
  );
  return runsReaching;
};

describe('transition (model-based)', () => {
  it('agrees with an independent model and keeps every invariant over random command sequences', () => {
    const runsReaching = runModel(fc.oneof(draftRequestArb, sentRequestArb), stepArb, 60, 300);
    // Not vacuous: the generated sequences reach every status (DECLINED, the rarest, in about 10 of 300 runs).
    for (const s of REQUEST_STATUSES) expect(runsReaching.get(s) ?? 0, `runs reaching ${s}`).toBeGreaterThan(0);
  });

  it('agrees with the model on identification, signing and sealing when every signer must identify', () => {
    const runsReaching = runModel(identifyingRequestArb, identificationStepArb, 40, 200);
    // Not vacuous: codes are issued, signers are locked out and refused, identified signers sign, requests are sealed.
    for (const s of IDENTIFICATION_MILESTONES) expect(runsReaching.get(s) ?? 0, `runs reaching ${s}`).toBeGreaterThan(0);
  });

  it('agrees with the model on mailed codes: at most 3 a window, and a new code lifts a lock-out', () => {
    const runsReaching = runModel(codeRequestArb, codeStepArb, 40, 200);
    for (const s of CODE_MILESTONES) expect(runsReaching.get(s) ?? 0, `runs reaching ${s}`).toBeGreaterThan(0);
  });
});

describe('the deadline', () => {
  it('past expiresAt a SENT request takes no recipient action, before the expiry job has run; the sender may still cancel', () => {
    const deadline = T0 + 3_600_000;
    const r: SignatureRequest = baseRequest({ status: 'SENT', sentAt: iso(T0), expiresAt: iso(deadline), recipients: [recipient('rcp_1', 'signer', 1, 'PENDING', 'email_otp')] });
    const later = new Date(deadline);
    for (const cmd of [
      { type: 'Open', recipientId: 'rcp_1' },
      { type: 'View', recipientId: 'rcp_1' },
      { type: 'Sign', recipientId: 'rcp_1', values: {}, signature: { kind: 'typed', value: 'A' } },
      { type: 'Decline', recipientId: 'rcp_1', reason: 'late' },
      { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h', expiresAt: iso(deadline + 600_000) },
      { type: 'Authenticate', recipientId: 'rcp_1' },
    ] as const)
      expect(transition(r, cmd, later), cmd.type).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidTransition', detail: expect.stringContaining('expired') } });
    expect(E.isRight(transition(r, { type: 'Open', recipientId: 'rcp_1' }, new Date(deadline - 1)))).toBe(true);
    expect(E.isRight(transition(r, { type: 'Cancel' }, later))).toBe(true);
    expect(E.isRight(transition(r, { type: 'Expire' }, later))).toBe(true);
  });
});

describe('terminal states', () => {
  it('never change status, and the only command they ever accept is Seal, once, from COMPLETED', () => {
    let seals = 0;
    fc.assert(
      fc.property(
        terminalRequestArb,
        fc.array(fc.tuple(fc.oneof(commandSpecArb, fc.constant<CommandSpec>({ type: 'Seal' })), stepDelayArb), { minLength: 1, maxLength: 8 }),
        (req, steps) => {
          const m = modelOf(req);
          let r = req;
          let now = T0;
          for (const [i, [spec, delay]] of steps.entries()) {
            now += delay;
            const cmd = resolve(spec, m, i);
            const result = transition(r, cmd, new Date(now));
            checkTerminal(r, cmd, result);
            if (E.isRight(result)) {
              seals++;
              expect(result.right.finishedSha256).toBe(cmd.type === 'Seal' && cmd.finishedSha256);
              r = result.right;
            }
            expect(r.status).toBe(req.status);
          }
        },
      ),
      { numRuns: 500 },
    );
    // Not vacuous: unsealed COMPLETED requests were met and sealed.
    expect(seals).toBeGreaterThan(0);
  });
});

describe('examples', () => {
  const sent = (signingOrder: 'parallel' | 'sequential') =>
    baseRequest({
      status: 'SENT',
      sentAt: iso(T0),
      signingOrder,
      recipients: [recipient('rcp_1', 'signer', 1), recipient('rcp_2', 'signer', 2), recipient('rcp_3', 'cc', 1)],
    });
  const sign = (id: string) => ({ type: 'Sign' as const, recipientId: id, values: {}, signature: TYPED_SIGNATURE });
  const seal = { type: 'Seal' as const, finishedSha256: 'f'.repeat(64), certificateId: 'coc_x', completedAt: iso(T0 + 60_000) };

  it('a later signer cannot sign before an earlier one under sequential signing', () => {
    const r = sent('sequential');
    expect(E.isLeft(transition(r, sign('rcp_2'), new Date(T0)))).toBe(true);
    const after1 = transition(r, sign('rcp_1'), new Date(T0));
    expect(E.isRight(after1)).toBe(true);
    if (E.isRight(after1)) {
      const done = transition(after1.right, sign('rcp_2'), new Date(T0));
      // Every signer has signed: the request awaits its seal, still SENT.
      expect(E.isRight(done) && [done.right.status, done.right.certificateId, done.right.completedAt]).toEqual(['SENT', null, null]);
    }
  });

  it('a cc recipient can neither sign nor decline, and Send needs a signer with a signature field', () => {
    const r = sent('parallel');
    expect(E.isLeft(transition(r, sign('rcp_3'), new Date(T0)))).toBe(true);
    expect(E.isLeft(transition(r, { type: 'Decline', recipientId: 'rcp_3', reason: '' }, new Date(T0)))).toBe(true);
    const draft = { ...r, status: 'DRAFT' as const, sentAt: null };
    expect(E.isLeft(transition(draft, { type: 'Send' }, new Date(T0)))).toBe(true);
    const onlyCc = { ...draft, recipients: [recipient('rcp_3', 'cc', 1)] };
    expect(E.isLeft(transition(onlyCc, { type: 'Send' }, new Date(T0)))).toBe(true);
  });

  const at = (s: number) => new Date(T0 + s * 1000);
  const identifying = (authentication: 'email_otp' | 'access_code') =>
    baseRequest({ status: 'SENT', sentAt: iso(T0), recipients: [recipient('rcp_1', 'signer', 1, 'PENDING', authentication)] });
  const step = (r: SignatureRequest, cmd: RequestCommand, s = 1): SignatureRequest => {
    const next = transition(r, cmd, at(s));
    if (E.isLeft(next)) throw new Error(`refused ${cmd.type}: ${JSON.stringify(next.left)}`);
    return next.right;
  };
  const refused = (r: SignatureRequest, cmd: RequestCommand) => {
    const next = transition(r, cmd, at(1));
    return E.isLeft(next) ? next.left : undefined;
  };

  it('a signer who must identify cannot sign before Authenticate, and can after', () => {
    const r = identifying('access_code');
    expect(refused(r, sign('rcp_1'))).toMatchObject({ _tag: 'InvalidTransition', command: 'Sign' });
    expect(refused(r, { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h', expiresAt: iso(T0) })).toBeDefined();
    const identified = step(r, { type: 'Authenticate', recipientId: 'rcp_1' }, 5);
    expect(identified.recipients[0]!.authenticatedAt).toBe(at(5).toISOString());
    expect(refused(identified, { type: 'Authenticate', recipientId: 'rcp_1' })).toBeDefined();
    const done = step(identified, sign('rcp_1'));
    expect(done.recipients[0]!.status).toBe('SIGNED');
    expect(done.recipients[0]!.signature).toEqual(TYPED_SIGNATURE);
  });

  it('a new e-mailed code replaces the pending one, and Authenticate clears it', () => {
    const first = step(identifying('email_otp'), { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h1', expiresAt: iso(T0 + 600_000) });
    const second = step(first, { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h2', expiresAt: iso(T0 + 700_000) });
    expect(second.recipients[0]!.otp).toEqual({ codeHash: 'h2', expiresAt: iso(T0 + 700_000) });
    expect(step(second, { type: 'Authenticate', recipientId: 'rcp_1' }).recipients[0]!.otp).toBeNull();
  });

  it(`locks identification after ${MAX_AUTH_ATTEMPTS} failures (the contract says 5); declining stays possible`, () => {
    expect(MAX_AUTH_ATTEMPTS).toBe(5);
    let r = step(identifying('email_otp'), { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h', expiresAt: iso(T0 + 600_000) });
    for (let i = 1; i <= 5; i++) {
      r = step(r, { type: 'FailAuthentication', recipientId: 'rcp_1' });
      expect(r.recipients[0]!.authFailures).toBe(i);
    }
    for (const cmd of [{ type: 'FailAuthentication', recipientId: 'rcp_1' }, { type: 'Authenticate', recipientId: 'rcp_1' }, sign('rcp_1')] as const)
      expect(refused(r, cmd), cmd.type).toMatchObject({ _tag: 'InvalidTransition' });
    expect(step(r, { type: 'Decline', recipientId: 'rcp_1', reason: 'locked out' }).status).toBe('DECLINED');
    // A new code mailed to the address (only the real signer can read it) lifts the lock-out.
    const unlocked = step(r, { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: 'h2', expiresAt: iso(T0 + 600_000) });
    expect(unlocked.recipients[0]!.authFailures).toBe(0);
    expect(step(unlocked, { type: 'Authenticate', recipientId: 'rcp_1' }).recipients[0]!.authenticatedAt).not.toBeNull();
  });

  it('mails at most 3 codes to a recipient in 10 minutes, then says how long to wait', () => {
    const issue = (r: SignatureRequest, ms: number) =>
      transition(r, { type: 'IssueOtp', recipientId: 'rcp_1', codeHash: `h${ms}`, expiresAt: iso(T0 + ms + 600_000) }, new Date(T0 + ms));
    let r = identifying('email_otp');
    for (const ms of [0, 60_000, 120_000]) r = E.getOrElseW((e) => { throw new Error(JSON.stringify(e)); })(issue(r, ms));
    expect(issue(r, 180_000)).toEqual(E.left({ _tag: 'TooSoon', retryAfterS: 420, detail: expect.any(String) }));
    // Once the first code is 10 minutes old, a fourth may go.
    expect(E.isRight(issue(r, 600_001))).toBe(true);
    expect(issue(r, 599_999)).toMatchObject({ _tag: 'Left', left: { _tag: 'TooSoon', retryAfterS: 1 } });
  });

  it('a recipient without identification refuses identification commands', () => {
    const r = sent('parallel');
    for (const cmd of [{ type: 'FailAuthentication', recipientId: 'rcp_1' }, { type: 'Authenticate', recipientId: 'rcp_1' }] as const)
      expect(refused(r, cmd)).toMatchObject({ _tag: 'InvalidTransition' });
  });

  it('the last signature leaves the request SENT; only Seal, once, makes it COMPLETED with its certificate', () => {
    const r = sent('parallel');
    expect(refused(r, seal)).toMatchObject({ _tag: 'InvalidTransition', from: 'SENT' });
    const half = step(r, sign('rcp_1'));
    expect(refused(half, seal)).toMatchObject({ _tag: 'InvalidTransition', from: 'SENT' });
    const signed = step(half, sign('rcp_2'));
    expect([signed.status, signed.certificateId, signed.completedAt, signed.finishedSha256]).toEqual(['SENT', null, null, null]);
    const sealed = step(signed, seal);
    expect(sealed).toEqual({ ...signed, status: 'COMPLETED', certificateId: 'coc_x', completedAt: iso(T0 + 60_000), finishedSha256: 'f'.repeat(64), version: signed.version + 1 });
    expect(refused(sealed, { ...seal, finishedSha256: '0'.repeat(64) })).toMatchObject({ _tag: 'InvalidTransition', from: 'COMPLETED' });
  });

  it('awaiting its seal, a request can be neither cancelled nor expired, even past its deadline', () => {
    const signed = step(step({ ...sent('parallel'), expiresAt: iso(T0 + 2000) }, sign('rcp_1')), sign('rcp_2'));
    const late = new Date(T0 + 5000);
    for (const cmd of [{ type: 'Cancel' }, { type: 'Expire' }] as const)
      expect(transition(signed, cmd, late), cmd.type).toMatchObject({ _tag: 'Left', left: { _tag: 'InvalidTransition', detail: expect.stringContaining('being produced') } });
    expect(E.isRight(transition(signed, seal, late))).toBe(true);
  });

  it('a request stored COMPLETED before the seal (older releases) is sealed once and keeps its certificate id and time', () => {
    const signed = step(step(sent('parallel'), sign('rcp_1')), sign('rcp_2'));
    const legacy = { ...signed, status: 'COMPLETED' as const, certificateId: 'coc_old', completedAt: iso(T0 + 1000) };
    const sealed = step(legacy, seal);
    expect(sealed).toEqual({ ...legacy, finishedSha256: 'f'.repeat(64), version: legacy.version + 1 });
    expect(refused(sealed, seal)).toMatchObject({ _tag: 'InvalidTransition', from: 'COMPLETED' });
  });
});
