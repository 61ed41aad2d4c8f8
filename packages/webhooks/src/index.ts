import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * Receiver-side helpers for esig webhooks, in the manner of stripe-node's `webhooks.constructEvent`.
 *
 * Every delivery carries `Esig-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>]`. Each `v1` is the
 * lower-case hex HMAC-SHA256, keyed with the UTF-8 bytes of one endpoint secret (the whole `whsec_…`
 * string), over the bytes of `<t>.` followed by the raw request body exactly as received. While a
 * secret is being rotated the header carries one `v1` per secret, the new one first.
 */

/** The delivery header that carries the signature (HTTP header names are case-insensitive). */
export const SIGNATURE_HEADER = 'Esig-Signature';

/** How far, in seconds, the signed timestamp may be from the receiver's clock (either way). */
export const DEFAULT_TOLERANCE_S = 300;

export type SignatureFailure = 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature';

export type VerifyResult = { readonly ok: true; readonly timestamp: number } | { readonly ok: false; readonly reason: SignatureFailure };

export interface VerifyOptions {
  /** Accepted gap between `t` and `now`, in seconds; default 300. `Infinity` turns the check off. */
  readonly toleranceS?: number;
  /** The receiver's clock in milliseconds since the epoch; default `Date.now`. */
  readonly now?: () => number;
}

/** The body's top-level keys (spec §6). `constructEvent` parses, it does not validate this shape. */
export interface WebhookEvent {
  readonly id: string;
  readonly type: string;
  readonly created: string;
  readonly test_mode: boolean;
  readonly data: Record<string, unknown>;
  readonly redelivery_of?: string;
}

/** Thrown by `constructEvent` when the signature does not verify; `reason` says why. */
export class WebhookSignatureError extends Error {
  override readonly name = 'WebhookSignatureError';
  constructor(readonly reason: SignatureFailure) {
    super(`webhook signature verification failed: ${reason}`);
  }
}

type RawBody = string | Uint8Array;

const encoder = new TextEncoder();

/** `t` as it appears in the header: the sender signed these exact digits. */
const TIMESTAMP = /^\d{1,15}$/;

const mac = (secret: string, t: string, rawBody: RawBody): string => {
  const h = createHmac('sha256', encoder.encode(secret));
  h.update(encoder.encode(`${t}.`));
  // A byte body goes in as it is: decoding and re-encoding would change bytes that are not valid UTF-8.
  h.update(typeof rawBody === 'string' ? encoder.encode(rawBody) : rawBody);
  return h.digest('hex');
};

const sameText = (a: string, b: string): boolean => {
  // UTF-8, not Latin-1: Latin-1 keeps only the low byte of each character, so a header's `\u0161` would
  // compare equal to the `a` of the real MAC.
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  // Lengths are public (a MAC is always 64 hex digits); only the content is compared in constant time.
  return x.length === y.length && timingSafeEqual(x, y);
};

interface ParsedHeader {
  readonly t: string;
  readonly v1: readonly string[];
}

/**
 * Reads `t` (exactly once, decimal digits) and every `v1`. Empty elements, elements without `=` and
 * unknown keys (a later `v2`, say) are ignored; whitespace around elements, keys and values is allowed.
 */
const parseHeader = (header: string): ParsedHeader | null => {
  let t: string | null = null;
  let duplicateT = false;
  const v1: string[] = [];
  for (const element of header.split(',')) {
    const eq = element.indexOf('=');
    if (eq < 0) continue;
    const key = element.slice(0, eq).trim();
    const value = element.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== null) duplicateT = true;
      t = value;
    } else if (key === 'v1') {
      v1.push(value);
    }
  }
  if (t === null || duplicateT || !TIMESTAMP.test(t) || v1.length === 0) return null;
  return { t, v1 };
};

/**
 * Checks an `Esig-Signature` header against the raw body and the endpoint's secrets (any of them may
 * match, for rotation). Call it with the body exactly as received — before any JSON parsing — and parse
 * only when it says `ok`. The signature is checked before the timestamp, so a forged header reads
 * `no_matching_signature` and a genuine but replayed one reads `timestamp_out_of_tolerance`.
 */
export const verifySignature = (
  rawBody: RawBody,
  header: string | undefined,
  secrets: readonly string[],
  opts: VerifyOptions = {},
): VerifyResult => {
  const toleranceS = opts.toleranceS ?? DEFAULT_TOLERANCE_S;
  if (Number.isNaN(toleranceS) || toleranceS < 0) throw new RangeError(`toleranceS must be a number >= 0, got ${toleranceS}`);
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_header' };
  const parsed = parseHeader(header);
  if (parsed === null) return { ok: false, reason: 'malformed_header' };

  let matched = false;
  for (const secret of secrets) {
    const expected = mac(secret, parsed.t, rawBody);
    for (const candidate of parsed.v1) {
      // No early exit: the work done does not depend on which pair matched.
      if (sameText(expected, candidate.toLowerCase())) matched = true;
    }
  }
  if (!matched) return { ok: false, reason: 'no_matching_signature' };

  const timestamp = Number(parsed.t);
  const nowS = Math.floor((opts.now ?? Date.now)() / 1000);
  if (Math.abs(nowS - timestamp) > toleranceS) return { ok: false, reason: 'timestamp_out_of_tolerance' };
  return { ok: true, timestamp };
};

/**
 * Verifies, then parses the body as JSON. Throws `WebhookSignatureError` when the signature does not
 * verify (nothing is parsed then); a body that verifies but is not JSON throws the `SyntaxError` of
 * `JSON.parse`. The result's type is the caller's assertion, not a validation.
 */
export const constructEvent = <T = WebhookEvent>(
  rawBody: RawBody,
  header: string | undefined,
  secrets: readonly string[],
  opts: VerifyOptions = {},
): T => {
  const verified = verifySignature(rawBody, header, secrets, opts);
  if (!verified.ok) throw new WebhookSignatureError(verified.reason);
  const text = typeof rawBody === 'string' ? rawBody : new TextDecoder('utf-8').decode(rawBody);
  return JSON.parse(text) as T;
};

/**
 * Builds `t=<timestampS>,v1=<hex>[,v1=<hex>…]`, one `v1` per secret in the order given, no spaces: the
 * header esig sends. For tests and documentation; the server signs in its core, in this same format.
 */
export const signatureHeader = (rawBody: RawBody, secrets: readonly string[], timestampS: number): string => {
  if (!Number.isSafeInteger(timestampS) || timestampS < 0) throw new RangeError(`timestampS must be a whole number of seconds >= 0, got ${timestampS}`);
  if (secrets.length === 0) throw new RangeError('at least one secret is needed to sign');
  const t = String(timestampS);
  return [`t=${t}`, ...secrets.map((s) => `v1=${mac(s, t, rawBody)}`)].join(',');
};
