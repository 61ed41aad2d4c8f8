import fc from 'fast-check';
import * as E from 'fp-ts/Either';
import { describe, expect, it } from 'vitest';
import type { FieldValue, RecipientStatus, RequestCommand, RequestStatus, SignatureRequest } from '@esig/core';
import { REQUEST_STATUSES, isTerminal, transition } from '@esig/core';
import type { CommandSpec } from './arbitraries';
import { T0, baseRequest, commandSpecArb, draftRequestArb, sentRequestArb, iso, recipient, stepDelayArb, terminalRequestArb } from './arbitraries';

// ------------------------------------------------------------------ an independent model of the rules

type Done = 'SIGNED' | 'DECLINED' | null;
const PROGRESS: readonly RecipientStatus[] = ['PENDING', 'NOTIFIED', 'OPENED', 'VIEWED'];

interface Model {
  status: RequestStatus;
  version: number;
  readonly documentIds: readonly string[];
  readonly signingOrder: 'parallel' | 'sequential';
  readonly expiresAt: number | null;
  readonly recipients: { id: string; role: 'signer' | 'cc'; order: number; progress: number; done: Done }[];
  readonly fields: { id: string; recipientId: string; type: string; required: boolean }[];
  certificateId: string | null;
  nextId: number;
}

interface Real {
  req: SignatureRequest;
  now: number;
  /** Statuses this run went through, to show that the generators reach every state. */
  readonly seen: Set<RequestStatus>;
}

const modelOf = (r: SignatureRequest): Model => ({
  status: r.status,
  version: r.version,
  documentIds: r.documentIds,
  signingOrder: r.signingOrder,
  expiresAt: r.expiresAt === null ? null : Date.parse(r.expiresAt),
  recipients: r.recipients.map((x) => ({ id: x.id, role: x.role, order: x.order, progress: 0, done: null })),
  fields: r.fields.map((f) => ({ id: f.id, recipientId: f.recipientId, type: f.type, required: f.required })),
  certificateId: null,
  nextId: 0,
});

const signersOf = (m: Model) => m.recipients.filter((x) => x.role === 'signer');

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

/** Turns a generated spec into a concrete command against the current state. */
const resolve = (spec: CommandSpec, m: Model, step: number): RequestCommand => {
  switch (spec.type) {
    case 'AddRecipient':
      return { type: 'AddRecipient', recipient: recipient(`rcp_n${m.nextId++}`, spec.role, spec.order) };
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
      const own = m.fields.filter((f) => f.recipientId === recipientId && f.type !== 'date_signed');
      const values: Record<string, FieldValue> = {};
      for (const f of own) values[f.id] = f.type === 'checkbox' ? true : 'Ada Lovelace';
      const firstRequired = own.find((f) => f.required);
      if (spec.fill === 'omitRequired' && firstRequired) delete values[firstRequired.id];
      if (spec.fill === 'blank' && firstRequired) values[firstRequired.id] = firstRequired.type === 'checkbox' ? false : '   ';
      if (spec.fill === 'foreign') values.fld_foreign = 'x';
      return { type: 'Sign', recipientId, values, certificateId: `coc_${step}` };
    }
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
  switch (cmd.type) {
    case 'AddRecipient':
      if (m.status !== 'DRAFT') return reject;
      return bumped(() => m.recipients.push({ id: cmd.recipient.id, role: cmd.recipient.role, order: cmd.recipient.order, progress: 0, done: null }));
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
    case 'Cancel':
      return m.status === 'DRAFT' || m.status === 'SENT' ? bumped(() => (m.status = 'CANCELLED')) : reject;
    case 'Expire':
      return m.status === 'SENT' ? bumped(() => (m.status = 'EXPIRED')) : reject;
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
      if (!dueIn(m).includes(rec)) return reject;
      const own = m.fields.filter((f) => f.recipientId === rec.id);
      if (Object.keys(cmd.values).some((id) => !own.some((f) => f.id === id))) return reject;
      if (own.some((f) => f.required && f.type !== 'date_signed' && !filled(cmd.values[f.id]))) return reject;
      return bumped(() => {
        rec.done = 'SIGNED';
        if (signersOf(m).every((x) => x.done === 'SIGNED')) {
          m.status = 'COMPLETED';
          m.certificateId = cmd.certificateId;
        }
      });
    }
    case 'Decline':
      if (m.status !== 'SENT' || !rec || rec.role !== 'signer' || rec.done !== null) return reject;
      return bumped(() => {
        rec.done = 'DECLINED';
        m.status = 'DECLINED';
      });
  }
};

// ------------------------------------------------------------------ invariants that hold for any step

const RANK: Record<RecipientStatus, number> = { PENDING: 0, NOTIFIED: 1, OPENED: 2, VIEWED: 3, SIGNED: 4, DECLINED: 4 };
const NEXT_STATUSES: Record<RequestStatus, readonly RequestStatus[]> = {
  DRAFT: ['DRAFT', 'SENT', 'CANCELLED'],
  SENT: ['SENT', 'COMPLETED', 'DECLINED', 'EXPIRED', 'CANCELLED'],
  COMPLETED: [],
  DECLINED: [],
  EXPIRED: [],
  CANCELLED: [],
};

const withoutVersion = (r: SignatureRequest) => ({ ...r, version: 0 });

/** Checks everything the brief promises about one accepted or refused step. */
const checkStep = (prev: SignatureRequest, cmd: RequestCommand, result: E.Either<unknown, SignatureRequest>) => {
  if (isTerminal(prev.status)) expect(E.isLeft(result), `${prev.status} accepted ${cmd.type}`).toBe(true);
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

  // COMPLETED iff every signer signed; the certificate exists exactly then.
  const signers = next.recipients.filter((x) => x.role === 'signer');
  const allSigned = signers.length > 0 && signers.every((x) => x.status === 'SIGNED');
  expect(next.status === 'COMPLETED').toBe(allSigned);
  expect(next.certificateId !== null).toBe(next.status === 'COMPLETED');
  if (next.status === 'COMPLETED' && prev.status !== 'COMPLETED') expect(next.certificateId).toBe(cmd.type === 'Sign' ? cmd.certificateId : 'none');

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
    if (prev.signingOrder === 'sequential')
      for (const x of prev.recipients)
        if (x.role === 'signer' && x.order < me.order) expect(x.status, 'an earlier signer has not signed yet').toBe('SIGNED');
  }
  if (cmd.type === 'Decline') {
    expect(next.status).toBe('DECLINED');
    expect(next.recipients.find((x) => x.id === cmd.recipientId)!.status).toBe('DECLINED');
  }
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

    const verdict = decide(m, cmd, r.now);
    expect(E.isRight(result), `model and state machine disagree on ${cmd.type} from ${prev.status}`).toBe(verdict.accept);
    if (E.isLeft(result)) return;
    verdict.apply();
    r.req = result.right;
    r.seen.add(r.req.status);

    // The real state matches the model.
    expect(r.req.status).toBe(m.status);
    expect(r.req.version).toBe(m.version);
    expect(r.req.certificateId).toBe(m.certificateId);
    expect(r.req.recipients.map((x) => [x.id, x.status])).toEqual(
      m.recipients.map((x) => [x.id, x.done ?? PROGRESS[x.progress]!]),
    );
    expect(r.req.fields.map((f) => f.id)).toEqual(m.fields.map((f) => f.id));
  }

  toString = () => `${JSON.stringify(this.spec)}+${this.delayMs}ms`;
}

const stepArb = fc.tuple(commandSpecArb, stepDelayArb).map(([spec, delay]) => new Step(spec, delay));

describe('transition (model-based)', () => {
  it('agrees with an independent model and keeps every invariant over random command sequences', () => {
    const runsReaching = new Map<RequestStatus, number>();
    fc.assert(
      fc.property(fc.oneof(draftRequestArb, sentRequestArb), fc.commands([stepArb], { maxCommands: 60, size: 'medium' }), (req, cmds) => {
        const real: Real = { req, now: T0, seen: new Set([req.status]) };
        fc.modelRun(() => ({ model: modelOf(req), real }), cmds);
        for (const s of real.seen) runsReaching.set(s, (runsReaching.get(s) ?? 0) + 1);
      }),
      { numRuns: 300 },
    );
    // Not vacuous: the generated sequences reach every status (DECLINED, the rarest, in about 10 of 300 runs).
    for (const s of REQUEST_STATUSES) expect(runsReaching.get(s) ?? 0, `runs reaching ${s}`).toBeGreaterThan(0);
  });
});

describe('terminal states', () => {
  it('refuse every command', () => {
    fc.assert(
      fc.property(terminalRequestArb, commandSpecArb, stepDelayArb, (req, spec, delay) => {
        const m = modelOf(req);
        const cmd = resolve(spec, m, 1);
        const result = transition(req, cmd, new Date(T0 + delay));
        expect(E.isLeft(result)).toBe(true);
      }),
      { numRuns: 500 },
    );
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
  const sign = (id: string) => ({ type: 'Sign' as const, recipientId: id, values: {}, certificateId: 'coc_x' });

  it('a later signer cannot sign before an earlier one under sequential signing', () => {
    const r = sent('sequential');
    expect(E.isLeft(transition(r, sign('rcp_2'), new Date(T0)))).toBe(true);
    const after1 = transition(r, sign('rcp_1'), new Date(T0));
    expect(E.isRight(after1)).toBe(true);
    if (E.isRight(after1)) {
      const done = transition(after1.right, sign('rcp_2'), new Date(T0));
      expect(E.isRight(done) && done.right.status).toBe('COMPLETED');
      expect(E.isRight(done) && done.right.certificateId).toBe('coc_x');
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
});
