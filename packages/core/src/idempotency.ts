import type { IdempotencyRecord } from './ports/idempotency-store.js';

/** How long a key is remembered (CONTRACT.md: 24 h). */
export const IDEMPOTENCY_TTL_MS: number = 24 * 60 * 60 * 1000;
/**
 * How long the first caller holds an in-flight key. Long enough for any single write; short enough that a
 * client retrying after a crashed server is not locked out for long.
 */
export const IDEMPOTENCY_LOCK_MS: number = 60 * 1000;

/** 1–255 printable ASCII characters (CONTRACT.md). */
export const isValidIdempotencyKey = (k: string): boolean => /^[\x20-\x7e]{1,255}$/.test(k);

export type IdempotencyDecision =
  /** No live record: run the operation (replacing an expired record if there is one). */
  | { readonly _tag: 'Proceed' }
  /** Same request already answered: send the stored response, do nothing else. */
  | { readonly _tag: 'Replay'; readonly record: IdempotencyRecord }
  /** The key was used for a different request. */
  | { readonly _tag: 'Conflict' }
  /** The same request is being processed right now. */
  | { readonly _tag: 'InProgress' }
  /** The same request was started but its holder vanished (lock expired): run it again. */
  | { readonly _tag: 'TakeOver' };

/**
 * The idempotency rule as a pure function. A different fingerprint is a conflict even while the first call
 * is still running: the key is bound to the first request, whatever happens to it.
 */
export const decideIdempotency = (
  existing: IdempotencyRecord | null,
  fingerprint: string,
  now: Date,
): IdempotencyDecision => {
  const at = now.toISOString();
  if (existing === null || existing.expiresAt <= at) return { _tag: 'Proceed' };
  if (existing.fingerprint !== fingerprint) return { _tag: 'Conflict' };
  if (existing.state === 'completed') return { _tag: 'Replay', record: existing };
  return existing.lockedUntil > at ? { _tag: 'InProgress' } : { _tag: 'TakeOver' };
};

/** What a request's idempotency fingerprint is taken of. */
export interface FingerprintInput {
  /**
   * The credential that made the call (an API key's id, or whatever identifies your caller). Part of the
   * fingerprint, so a record answers only the credential that caused it: another credential of the same org
   * repeating the key gets `Conflict`, never the stored response (which may hold a secret minted for the first).
   */
  readonly credential: string;
  readonly method: string;
  readonly path: string;
  /** A digest of the body (and query), by meaning for JSON, by bytes otherwise. */
  readonly bodyDigest: string;
}

/**
 * The canonical text a fingerprint is taken of. JSON bodies are compared by meaning (key order and
 * white space do not matter), other bodies by their digest.
 */
export const fingerprintSource = (f: FingerprintInput): string => `${f.credential}\n${f.method.toUpperCase()} ${f.path}\n${f.bodyDigest}`;

/** A JSON text with object keys sorted at every level, so equal values give equal text. */
export const canonicalJson = (value: unknown): string => {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.keys(value as object)
    .sort()
    .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`);
  return `{${entries.join(',')}}`;
};
