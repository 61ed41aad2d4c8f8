import type { WebhookResponse } from './ports/webhook-sender.js';
import type { Crypto } from './ports/crypto.js';

/** Attempts per delivery, in all (spec: 8). */
export const MAX_DELIVERY_ATTEMPTS = 8;
/** Gaps before attempts 2..8 (CONTRACT: ≈ 1 min, 5 min, 15 min, 45 min, 2 h, 4 h, 8 h; ≈ 15 h in all). */
export const RETRY_GAPS_MS: readonly number[] = [60_000, 300_000, 900_000, 2_700_000, 7_200_000, 14_400_000, 28_800_000];
/**
 * An event with at most this many subscribed endpoints gets its deliveries (and their first attempts' jobs)
 * in the very transaction that records it; with more, one `webhook.dispatch` job fans it out later, so an API
 * write never grows with the number of an org's endpoints. Most orgs have one or two: for them an event is
 * one job, not two.
 */
export const MAX_INLINE_FANOUT = 3;

/** Receiver answer time limit (spec: 10 s). */
export const DELIVERY_TIMEOUT_MS = 10_000;
/** Final failures in a row that disable an endpoint (CONTRACT: 5). */
export const DISABLE_AFTER_FINAL_FAILURES = 5;
/** …or this long with nothing but failures (CONTRACT: 3 days). */
export const DISABLE_AFTER_FAILING_MS: number = 3 * 24 * 3_600_000;
/** How long the previous secret keeps signing after a rotation (CONTRACT: 24 h). */
export const SECRET_OVERLAP_MS: number = 24 * 3_600_000;
/** Response body kept in the delivery log (CONTRACT: 1,024 bytes). */
export const RESPONSE_EXCERPT_BYTES = 1024;

export type AttemptVerdict =
  | { readonly _tag: 'Succeeded' }
  /** Tried again after `delayMs`. */
  | { readonly _tag: 'Retry'; readonly delayMs: number }
  /** No more attempts: a non-retried 4xx, or every attempt spent. */
  | { readonly _tag: 'FinalFailure'; readonly reason: string };

/** 4xx answers that are still worth retrying (spec): request timeout, too early, too many requests. */
const RETRIED_4XX = new Set([408, 425, 429]);

export const outcomeOf = (r: WebhookResponse): string => (r._tag === 'Answered' ? String(r.status) : r.error);

/**
 * The delivery rule as a pure function: a 2xx succeeds; a 4xx other than 408/425/429 is final; anything
 * else (3xx, 5xx, 408/425/429, timeout, network and TLS errors) is retried on the schedule — scaled, with
 * ±10 % jitter, and stretched to a receiver's Retry-After up to the longest gap — until 8 attempts are spent.
 * `random` is in [0, 1).
 */
export const judgeAttempt = (r: WebhookResponse, attempt: number, scale: number, random: number): AttemptVerdict => {
  if (r._tag === 'Answered' && r.status >= 200 && r.status < 300) return { _tag: 'Succeeded' };
  if (r._tag === 'Answered' && r.status >= 400 && r.status < 500 && !RETRIED_4XX.has(r.status))
    return { _tag: 'FinalFailure', reason: `the receiver answered ${r.status}, which is not retried` };
  if (attempt >= MAX_DELIVERY_ATTEMPTS) return { _tag: 'FinalFailure', reason: `all ${MAX_DELIVERY_ATTEMPTS} attempts failed (last: ${outcomeOf(r)})` };
  const base = RETRY_GAPS_MS[attempt - 1]! * scale;
  const jittered = base * (0.9 + 0.2 * random);
  const asked = r._tag === 'Answered' && r.retryAfterS !== null ? Math.min(r.retryAfterS * 1000, RETRY_GAPS_MS[RETRY_GAPS_MS.length - 1]! * scale) : 0;
  return { _tag: 'Retry', delayMs: Math.max(jittered, asked) };
};

/**
 * `Esig-Signature`: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">` with one `v1` per secret
 * in force, the current one first (spec section 6; no spaces).
 */
export const signatureHeader = (crypto: Crypto, body: string, secrets: readonly string[], timestampS: number): string =>
  [`t=${timestampS}`, ...secrets.map((s) => `v1=${crypto.hmacSha256Hex(s, `${timestampS}.${body}`)}`)].join(',');

/**
 * The event body exactly as the spec fixes it: `id, type, created, test_mode, data` (+ `redelivery_of` on
 * a resend), snake_case inside `data`. Serialized once, when the delivery is created.
 */
export const webhookBody = (e: { readonly id: string; readonly type: string; readonly createdAt: string; readonly mode: string; readonly data: unknown; readonly redeliveryOf: string | null }): string =>
  JSON.stringify({
    id: e.id,
    type: e.type,
    created: e.createdAt,
    test_mode: e.mode === 'test',
    data: e.data,
    ...(e.redeliveryOf !== null ? { redelivery_of: e.redeliveryOf } : {}),
  });

/**
 * The secrets that sign a delivery at `at`: the current one first, then each earlier one still inside its
 * overlap window (`retiresAt` after `at`). Once a window ends, only the newer secrets sign.
 */
export const secretsInForce = <S extends { readonly retiresAt: string | null }>(secrets: readonly S[], at: string): S[] =>
  secrets.filter((s) => s.retiresAt === null || s.retiresAt > at);

/** The type of a test delivery's event (`POST …/test`): no event of the log has it, and no endpoint subscribes to it. */
export const TEST_EVENT_TYPE = 'webhook.test';
