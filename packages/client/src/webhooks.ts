import { EsigSignatureVerificationError } from './errors.js';
import type { Event } from './generated/api-types.js';

// Webhook verification with WebCrypto only, so it runs wherever the client does (Node ≥ 20, browsers, Deno,
// Bun, edge runtimes). It follows @esig/webhooks (the Node receiver helper) rule for rule; both run the same
// test vectors, and a property test compares them on random input.

/** A delivery's body (spec §6): snake_case, identifiers, states, digests and times only. */
export interface WebhookEvent {
  readonly id: string;
  /** An event type, or `webhook.test` for a test delivery. */
  readonly type: Event['type'] | 'webhook.test';
  readonly created: string;
  readonly test_mode: boolean;
  readonly data: Record<string, unknown>;
  /** Present only on a resent event: the id of the original. */
  readonly redelivery_of?: string;
}

export const DEFAULT_TOLERANCE_S = 300;

type RawBody = string | Uint8Array;
const encoder = new TextEncoder();
const TIMESTAMP = /^\d{1,15}$/;

const hmacHex = async (secret: string, t: string, rawBody: RawBody): Promise<string> => {
  const key = await crypto.subtle.importKey('raw', encoder.encode(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  // The bytes of `<t>.` then the body exactly as received: a byte body is never decoded and re-encoded.
  const prefix = encoder.encode(`${t}.`);
  const body = typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody;
  const message = new Uint8Array(prefix.length + body.length);
  message.set(prefix);
  message.set(body, prefix.length);
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
  return [...mac].map((b) => b.toString(16).padStart(2, '0')).join('');
};

/** Compares two strings in time that depends only on their lengths (a MAC is always 64 hex digits). */
const sameText = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false;
  let diff = 0;
  for (let i = 0; i < a.length; i++) diff |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return diff === 0;
};

/** `t` exactly once (decimal digits) and every `v1`; unknown elements (a later `v2`) and empty ones are ignored. */
const parseHeader = (header: string): { t: string; v1: string[] } | null => {
  let t: string | null = null;
  let duplicateT = false;
  const v1: string[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq < 0) continue;
    const k = element.slice(0, eq).trim();
    const v = element.slice(eq + 1).trim();
    if (k === 't') {
      if (t !== null) duplicateT = true;
      t = v;
    } else if (k === 'v1') v1.push(v);
  }
  return t === null || duplicateT || !TIMESTAMP.test(t) || v1.length === 0 ? null : { t, v1 };
};

export interface ConstructEventOptions {
  /** The receiver's clock in milliseconds since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/**
 * Verifies an `Esig-Signature` header against the raw body and the endpoint's secret (or secrets, during a
 * rotation), then parses the body. Call it with the body exactly as received, before any JSON parsing.
 * Rejects with `EsigSignatureVerificationError` (answer 400) when the signature does not verify, or the
 * signed time is more than `toleranceS` seconds from now.
 *
 * @example
 * const event = await Esig.webhooks.constructEvent(rawBody, request.headers.get('esig-signature'), process.env.ESIG_WEBHOOK_SECRET!);
 * if (event.type === 'request.completed') console.log(event.data.request_id);
 */
export const constructEvent = async (
  rawBody: RawBody,
  header: string | null | undefined,
  secret: string | readonly string[],
  toleranceS: number = DEFAULT_TOLERANCE_S,
  options: ConstructEventOptions = {},
): Promise<WebhookEvent> => {
  if (Number.isNaN(toleranceS) || toleranceS < 0) throw new RangeError(`toleranceS must be a number >= 0, got ${toleranceS}`);
  if (header === undefined || header === null || header.trim() === '') throw new EsigSignatureVerificationError('missing_header');
  const parsed = parseHeader(header);
  if (parsed === null) throw new EsigSignatureVerificationError('malformed_header');
  let matched = false;
  for (const s of typeof secret === 'string' ? [secret] : secret) {
    const expected = await hmacHex(s, parsed.t, rawBody);
    // No early exit: the work does not depend on which pair matched.
    for (const candidate of parsed.v1) if (sameText(expected, candidate.toLowerCase())) matched = true;
  }
  if (!matched) throw new EsigSignatureVerificationError('no_matching_signature');
  const nowS = Math.floor((options.now ?? Date.now)() / 1000);
  if (Math.abs(nowS - Number(parsed.t)) > toleranceS) throw new EsigSignatureVerificationError('timestamp_out_of_tolerance');
  return JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8').decode(rawBody)) as WebhookEvent;
};

/**
 * An `Esig-Signature` header for `rawBody` signed at `timestampS` with each secret (new one first), as the
 * server sends it: for testing a receiver.
 */
export const generateTestHeader = async (rawBody: RawBody, secret: string | readonly string[], timestampS: number = Math.floor(Date.now() / 1000)): Promise<string> => {
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) throw new RangeError(`timestampS must be a whole number of seconds >= 0, got ${timestampS}`);
  const secrets = typeof secret === 'string' ? [secret] : secret;
  if (secrets.length === 0) throw new RangeError('at least one secret is needed to sign');
  const t = String(timestampS);
  const macs = await Promise.all(secrets.map((s) => hmacHex(s, t, rawBody)));
  return [`t=${t}`, ...macs.map((m) => `v1=${m}`)].join(',');
};
