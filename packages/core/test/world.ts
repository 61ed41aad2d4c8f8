import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type {
  AddRecipientInput,
  AuthenticationMethod,
  Document,
  Command,
  DomainEvent,
  EventType,
  EvidenceEntry,
  Field,
  Job,
  JobHandler,
  JobKind,
  JobOf,
  Principal,
  Recipient,
  SignatureRequest,
  SigningOrder,
  Tenant,
} from '@esig/core';
import {
  addField,
  addRecipient,
  createSignatureRequest,
  execute,
  inspectUpload,
  issueSigningLink,
  sendSignatureRequest,
  uploadDocument,
} from '@esig/core';
import { createAesGcmSecretBox } from '@esig/runtime-node';
import { fakeStampPreflight } from '@esig/testkit';
import { fakeMail, fakeRenderer, fakeWebhookNet } from './fakes.js';
import { harness, principal, right } from './support.js';

export const PUBLIC_URL = 'https://esig.example';
export const CLIENT = { ip: '198.51.100.7', userAgent: 'Mozilla/5.0 (core tests)' };
export const DAY = 24 * 3_600_000;
/** The worker that claims jobs in these tests. */
export const WORKER = 'core-test-worker';

/**
 * One harness wired for every signing, job and webhook use case: memory stores, manual clock, sequential
 * ids, seeded crypto, the PDF fakes of the test kit, and the mail, renderer and webhook fakes.
 */
export const world = (o: { reminderIntervalMs?: number | null } = {}) => {
  const h = harness();
  const mail = fakeMail();
  const renderer = fakeRenderer();
  const net = fakeWebhookNet(h.clock);
  const stamps = fakeStampPreflight();
  const deps = {
    ...h,
    stamps,
    pageLimits: { maxPagesPerDocument: 10, maxPagesPerRequest: 40 },
    mail: mail.transport,
    publicUrl: PUBLIC_URL,
    renderer,
    secrets: createAesGcmSecretBox(new Uint8Array(32).fill(7)),
    sender: net.sender,
    retryScale: 1,
    // The middle of the jitter: every retry gap is exactly the schedule's.
    random: () => 0.5,
    reminderIntervalMs: o.reminderIntervalMs ?? null,
  };
  return { h, deps, mail, renderer, net, stamps, run: execute(deps), p: principal(['*']) };
};
export type World = ReturnType<typeof world>;

export interface SignerSpec {
  readonly authentication?: AuthenticationMethod;
  readonly accessCode?: string;
  readonly order?: number;
  /** A required text field besides the signature field (default true). */
  readonly text?: boolean;
}

export interface SentSigner {
  readonly rcp: Recipient;
  /** A link of this signer, issued as a backend would (not mailed). */
  readonly token: string;
  readonly signature: Field;
  readonly text: Field | null;
}

/**
 * A request as a sender makes it: documents uploaded (bytes of their own), signers with a signature field
 * and, by default, a required text field, cc recipients, then sent (unless `send: false`), with a link
 * issued for every signer.
 */
export const sentRequest = async (
  w: World,
  o: {
    readonly signers?: readonly SignerSpec[];
    readonly cc?: number;
    readonly signingOrder?: SigningOrder;
    readonly expiresAt?: string | null;
    readonly documents?: number;
    readonly p?: Principal;
    readonly send?: boolean;
    readonly title?: string;
  } = {},
) => {
  const p = o.p ?? w.p;
  const docs: Array<{ bytes: Uint8Array; doc: Document }> = [];
  for (let i = 0; i < (o.documents ?? 1); i++) {
    const bytes = new TextEncoder().encode(`%PDF-1.7 upload ${i} of ${p.tenant.orgId}/${p.tenant.mode}\n`);
    docs.push({ bytes, doc: await right(pipe(inspectUpload(w.deps)(p, bytes), TE.chainW((pdf) => w.run(uploadDocument(w.deps)(p, { name: `part-${i + 1}.pdf`, pdf }))))) });
  }
  const req = await right(
    w.run(
      createSignatureRequest(w.deps)(p, {
        title: o.title ?? 'Lease',
        documentIds: docs.map((d) => d.doc.id),
        signingOrder: o.signingOrder ?? 'parallel',
        expiresAt: o.expiresAt ?? null,
      }),
    ),
  );
  const specs = o.signers ?? [{}];
  const added: Array<{ rcp: Recipient; signature: Field; text: Field | null }> = [];
  for (const [i, s] of specs.entries()) {
    const input: AddRecipientInput = {
      email: `signer${i + 1}@example.com`,
      firstName: `Signer${i + 1}`,
      lastName: 'Test',
      authentication: s.authentication ?? 'none',
      ...(s.order !== undefined ? { order: s.order } : {}),
      ...(s.accessCode !== undefined ? { accessCode: s.accessCode } : {}),
    };
    const rcp = await right(w.run(addRecipient(w.deps)(p, req.id, input)));
    const field = (type: 'signature' | 'text', y: number) =>
      right(w.run(addField(w.deps)(p, req.id, { documentId: docs[i % docs.length]!.doc.id, recipientId: rcp.id, type, page: 1, x: 72, y, width: 200, height: 30 })));
    const signature = await field('signature', 100 + 40 * i);
    const text = s.text === false ? null : await field('text', 400 + 40 * i);
    added.push({ rcp, signature, text });
  }
  const cc: Recipient[] = [];
  for (let i = 0; i < (o.cc ?? 0); i++)
    cc.push(await right(w.run(addRecipient(w.deps)(p, req.id, { email: `cc${i + 1}@example.com`, firstName: `Cc${i + 1}`, lastName: 'Test', role: 'cc' }))));
  if (o.send === false) return { p, req, docs, signers: added.map((a) => ({ ...a, token: '' })), cc };
  await right(w.run(sendSignatureRequest(w.deps)(p, req.id)));
  const signers: SentSigner[] = [];
  for (const a of added) signers.push({ ...a, token: (await right(w.run(issueSigningLink(w.deps)(p, req.id, a.rcp.id)))).token });
  return { p, req, docs, signers, cc };
};
export type Sent = Awaited<ReturnType<typeof sentRequest>>;

/** What a signer sends to sign: a value for their text field, and a typed signature. */
export const signInput = (s: { readonly text: Field | null }, name = 'Ada Lovelace') => ({
  values: s.text ? { [s.text.id]: 'Flat 2, 10 High Street' } : {},
  signature: { kind: 'typed' as const, value: name },
});

// ---------------------------------------------------------------- reading what was recorded

export const requestNow = async (w: World, tenant: Tenant, id: string): Promise<SignatureRequest> => (await right(w.h.stores.signatureRequests.findById(tenant, id)))!;

export const eventsOf = async (w: World, tenant: Tenant, type?: EventType): Promise<DomainEvent[]> =>
  [...(await right(w.h.stores.events.list(tenant, { limit: 10_000, order: 'asc', after: null, filter: type === undefined ? {} : { type } }))).items];

export const evidenceOf = async (w: World, tenant: Tenant, requestId: string): Promise<readonly EvidenceEntry[]> => right(w.h.stores.evidence.listForRequest(tenant, requestId));

/**
 * Everything a request's signing left behind, to show that a refused step recorded nothing: the request
 * row, every event of the tenant, the evidence and the jobs due by far.
 */
export const snapshot = async (w: World, tenant: Tenant, requestId: string) => ({
  request: await requestNow(w, tenant, requestId),
  events: await eventsOf(w, tenant),
  evidence: await evidenceOf(w, tenant, requestId),
  nextJob: await right(w.h.stores.jobs.nextRunAt(['mail.invite', 'mail.remind', 'mail.completed', 'seal.complete', 'seal', 'expire', 'remind.auto', 'webhook.dispatch', 'webhook.deliver'])),
});

// ---------------------------------------------------------------- jobs, as the worker runs them

const FAR = '9999-01-01T00:00:00.000Z';

/**
 * Claims the jobs of these kinds due at `at` (by default every one, however far ahead), as a worker does:
 * each is then leased to WORKER, so a second claim does not return it again.
 */
export const claim = async <K extends JobKind>(w: World, kinds: readonly K[], at: string = '9000-01-01T00:00:00.000Z'): Promise<readonly JobOf<K>[]> =>
  // The queue hands out only the kinds asked for.
  (await right(w.h.stores.jobs.claim(kinds, WORKER, at, FAR, 1000))) as readonly JobOf<K>[];

/**
 * Runs one claimed job as the worker does: the handler's outside work, then its command in one
 * transaction with the job's completion (which must still hold the lease).
 */
export const runJob = <K extends JobKind>(w: World, handler: JobHandler<K>, job: Job) =>
  pipe(
    // The tests hand each handler jobs claimed for its kinds, as the worker's handler map does.
    handler(job as JobOf<K>),
    TE.chainW((command) =>
      w.h.uow.transaction((tx) =>
        pipe(
          command(tx),
          TE.chainW(() => tx.jobs.complete(job.id, WORKER)),
        ),
      ),
    ),
  )();

/** Runs a job and expects it to succeed. */
export const runOk = async <K extends JobKind>(w: World, handler: JobHandler<K>, job: Job): Promise<void> => {
  const r = await runJob(w, handler, job);
  if (E.isLeft(r)) throw new Error(`job ${job.kind} failed: ${JSON.stringify(r.left)}`);
};

/** Commits a handler's command on its own (no job completion): a second worker's late commit. */
export const commit = (w: World, command: Command<void>) => w.h.uow.transaction(command)();
