import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type {
  CertificateData,
  Clock,
  DocumentRenderer,
  FinishedDocumentInput,
  MailFailure,
  MailMessage,
  MailTransport,
  Tenant,
  WebhookRequest,
  WebhookResponse,
  WebhookSender,
  WebhookTransportError,
} from '@esig/core';
import { RESPONSE_EXCERPT_BYTES } from '@esig/core';
import { nodeCrypto } from '@esig/runtime-node';
import type { VerifyResult } from '@esig/webhooks';
import { verifySignature } from '@esig/webhooks';

/*
 * Fakes of the outside parts the core's signing, job and webhook use cases talk to, where the test kit has
 * none. Each keeps its port's contract and answers as the real part would, so that a use case that works
 * against them is not working against a convenience.
 */

// ---------------------------------------------------------------- mail

export interface SentMail {
  readonly tenant: Tenant;
  readonly message: MailMessage;
}

export interface FakeMail {
  /** The transport for a tenant, as the composition root hands it to the use cases. */
  readonly transport: (tenant: Tenant) => MailTransport;
  /** Every message a server accepted, in order. */
  readonly sent: SentMail[];
  /** Every message handed over, accepted or not. */
  readonly attempts: SentMail[];
  /** From now on the server refuses every message: for good (5xx) or for now (4xx). */
  fail(permanent: boolean, detail?: string): void;
  /** The server accepts mail again. */
  recover(): void;
}

/** A mail server in memory: records what it is given, and can be told to refuse transiently or for good. */
export const fakeMail = (): FakeMail => {
  const sent: SentMail[] = [];
  const attempts: SentMail[] = [];
  let failure: MailFailure | null = null;
  return {
    transport: (tenant) => ({
      send: (message) => async () => {
        attempts.push({ tenant, message });
        if (failure !== null) return E.left(failure);
        sent.push({ tenant, message });
        return E.right(undefined);
      },
    }),
    sent,
    attempts,
    fail: (permanent, detail = permanent ? '550 5.1.1 mailbox unavailable' : '421 4.3.2 service not available, try later') => {
      failure = { _tag: 'MailFailure', permanent, detail };
    },
    recover: () => {
      failure = null;
    },
  };
};

/** The signing link in a mail (`<publicUrl>/sign/<token>`), and its token. */
export const linkIn = (message: MailMessage, publicUrl: string): { url: string; token: string } => {
  const m = new RegExp(`${publicUrl.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/sign/([A-Za-z0-9]+)`).exec(message.text);
  if (!m) throw new Error(`no signing link in: ${message.text}`);
  // The HTML part carries the same link.
  if (!message.html.includes(m[0])) throw new Error('the HTML part lacks the text part’s link');
  return { url: m[0], token: m[1]! };
};

/** The six-digit code in an identification mail. */
export const codeIn = (message: MailMessage): string => {
  const m = /\b(\d{6})\b/.exec(message.text);
  if (!m) throw new Error(`no code in: ${message.text}`);
  return m[1]!;
};

// ---------------------------------------------------------------- rendering

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export interface FakeRenderer extends DocumentRenderer {
  /** Every finished document asked for, with the bytes returned. */
  readonly finished: Array<{ readonly input: FinishedDocumentInput; readonly output: Uint8Array }>;
  /** Every certificate asked for, with the bytes returned. */
  readonly certificates: Array<{ readonly data: CertificateData; readonly testMode: boolean; readonly output: Uint8Array }>;
  /** From now on renderings (both kinds, or only one) fail with `detail`; `null` heals it. */
  fail(detail: string | null, only?: 'finished' | 'certificate'): void;
}

/**
 * A renderer that produces real, distinct bytes for what it was given — a PDF-like text that names each
 * document's digest, every field's value, the signatures and the test mark — so a test can check that what
 * was stored is exactly what was rendered, and its digest. The certificate's bytes carry its data as JSON
 * (see `certificateIn`).
 */
export const fakeRenderer = (): FakeRenderer => {
  const finished: FakeRenderer['finished'] = [];
  const certificates: FakeRenderer['certificates'] = [];
  let failure: { detail: string; only: 'finished' | 'certificate' | undefined } | null = null;
  const failing = (kind: 'finished' | 'certificate') => (failure !== null && (failure.only ?? kind) === kind ? failure.detail : null);
  return {
    finished,
    certificates,
    fail: (detail, only) => {
      failure = detail === null ? null : { detail, only };
    },
    renderFinished: (input) => {
      const detail = failing('finished');
      if (detail !== null) return TE.left({ _tag: 'RenderFailure', detail });
      const body = {
        documents: input.documents.map((d) => ({ id: d.id, sha256: nodeCrypto.sha256Hex(d.bytes) })),
        fields: input.fields.map((f) => [f.id, f.value]),
        signatures: input.signatures,
        test: input.testMode,
      };
      const output = encoder.encode(`%PDF-1.7\n% finished\n${JSON.stringify(body)}\n%%EOF\n`);
      finished.push({ input, output });
      return TE.right(output);
    },
    renderCertificate: (data, testMode) => {
      const detail = failing('certificate');
      if (detail !== null) return TE.left({ _tag: 'RenderFailure', detail });
      const output = encoder.encode(`%PDF-1.7\n% certificate\n${JSON.stringify(data)}\n%%EOF\n`);
      certificates.push({ data, testMode, output });
      return TE.right(output);
    },
  };
};

/** The certificate data inside bytes made by `fakeRenderer`. */
export const certificateIn = (bytes: Uint8Array): CertificateData => {
  const lines = decoder.decode(bytes).split('\n');
  if (lines[1] !== '% certificate') throw new Error('not a certificate of the fake renderer');
  return JSON.parse(lines[2]!) as CertificateData;
};

// ---------------------------------------------------------------- webhooks

/** What a receiver answers to one delivery: a status (with a body and Retry-After), or no answer at all. */
export type Reply =
  | { readonly status: number; readonly body?: string; readonly retryAfterS?: number }
  | { readonly noAnswer: WebhookTransportError; readonly detail?: string };

export interface ReceivedDelivery {
  readonly request: WebhookRequest;
  /** The receiver's own check of `Esig-Signature` against the secrets it knows, on its clock. */
  readonly verified: VerifyResult;
}

export interface Receiver {
  readonly url: string;
  /** The endpoint secrets this receiver checks signatures with (any may match); set after creation. */
  secrets: string[];
  /** Every delivery that reached it, verified or not. */
  readonly received: ReceivedDelivery[];
  /** Queues replies for the next deliveries, in order; once they are used up it answers 200 `ok`. */
  answer(...replies: Reply[]): void;
}

export interface FakeWebhookNet {
  readonly sender: WebhookSender;
  /** A receiver reachable at `url` (an https URL on a public host). */
  receiver(url: string): Receiver;
  /** Every request the sender made, in order, whether or not anyone received it. */
  readonly sent: WebhookRequest[];
}

/** Loopback, private and link-local hosts: never a target. (Only hosts of registered receivers resolve.) */
const PRIVATE_HOST = /^(localhost|127\.\d+\.\d+\.\d+|10\.\d+\.\d+\.\d+|192\.168\.\d+\.\d+|172\.(1[6-9]|2\d|3[01])\.\d+\.\d+|169\.254\.\d+\.\d+|\[::1\]|::1|0\.0\.0\.0)$/;

const excerpt = (body: string): string => decoder.decode(encoder.encode(body).slice(0, RESPONSE_EXCERPT_BYTES));

/**
 * The internet as the WebhookSender port sees it: the sender enforces the target rules (https only, no
 * credentials, no private or loopback address, a host that resolves) at every call, and each receiver
 * checks the signature as a real one would with `@esig/webhooks` on the receiver's clock — answering 400
 * when it does not verify, as the spec asks — before answering what it was told to. Durations are fixed
 * and fractional, so rounding shows.
 */
export const fakeWebhookNet = (clock: Clock): FakeWebhookNet => {
  const receivers = new Map<string, Receiver & { readonly replies: Reply[] }>();
  const sent: WebhookRequest[] = [];
  const target = (url: string): { ok: true; host: string } | { ok: false; reason: string; error: WebhookTransportError } => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { ok: false, reason: 'not a valid URL', error: 'refused_target' };
    }
    if (u.protocol !== 'https:') return { ok: false, reason: `only https URLs are allowed, not ${u.protocol}`, error: 'refused_target' };
    if (u.username !== '' || u.password !== '') return { ok: false, reason: 'credentials in the URL are not allowed', error: 'refused_target' };
    if (PRIVATE_HOST.test(u.hostname)) return { ok: false, reason: `${u.hostname} is not a public address`, error: 'refused_target' };
    if (![...receivers.values()].some((r) => new URL(r.url).hostname === u.hostname)) return { ok: false, reason: `${u.hostname} did not resolve to any address`, error: 'dns' };
    return { ok: true, host: u.hostname };
  };
  const sender: WebhookSender = {
    checkTarget: (url) => async () => {
      const t = target(url);
      return t.ok ? { ok: true } : { ok: false, reason: t.reason };
    },
    send: (request) => async (): Promise<WebhookResponse> => {
      sent.push(request);
      const t = target(request.url);
      if (!t.ok) return { _tag: 'NoAnswer', error: t.error, detail: t.reason, durationMs: 0.4 };
      const r = receivers.get(request.url);
      if (r === undefined) return { _tag: 'Answered', status: 404, bodyExcerpt: 'no such path', retryAfterS: null, durationMs: 3.2 };
      const verified = verifySignature(request.body, request.headers['Esig-Signature'], r.secrets, { now: () => clock.now().getTime() });
      r.received.push({ request, verified });
      if (!verified.ok) return { _tag: 'Answered', status: 400, bodyExcerpt: `invalid signature: ${verified.reason}`, retryAfterS: null, durationMs: 4.6 };
      const reply = r.replies.shift() ?? { status: 200, body: 'ok' };
      if ('noAnswer' in reply) return { _tag: 'NoAnswer', error: reply.noAnswer, detail: reply.detail ?? `${reply.noAnswer} after ${request.timeoutMs} ms`, durationMs: reply.noAnswer === 'timeout' ? request.timeoutMs : 12.5 };
      return { _tag: 'Answered', status: reply.status, bodyExcerpt: excerpt(reply.body ?? ''), retryAfterS: reply.retryAfterS ?? null, durationMs: 12.5 };
    },
  };
  return {
    sender,
    sent,
    receiver: (url) => {
      const replies: Reply[] = [];
      const r = { url, secrets: [] as string[], received: [] as ReceivedDelivery[], replies, answer: (...more: Reply[]) => void replies.push(...more) };
      receivers.set(url, r);
      return r;
    },
  };
};
