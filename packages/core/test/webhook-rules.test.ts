import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WebhookResponse } from '../src/index.js';
import { MAX_DELIVERY_ATTEMPTS, RETRY_GAPS_MS, SECRET_OVERLAP_MS } from '../src/index.js';
import { judgeAttempt, secretsInForce, signatureHeader, webhookBody } from '../src/internal.js';
import { nodeCrypto } from '@esig/runtime-node';
import { signatureHeader as receiverHeader, verifySignature } from '@esig/webhooks';

const answered = (status: number, retryAfterS: number | null = null): WebhookResponse => ({ _tag: 'Answered', status, bodyExcerpt: '', retryAfterS, durationMs: 5 });
const noAnswer = (error: 'timeout' | 'connect' | 'tls' | 'dns' | 'refused_target'): WebhookResponse => ({ _tag: 'NoAnswer', error, detail: error, durationMs: 5 });
const attempt = fc.integer({ min: 1, max: MAX_DELIVERY_ATTEMPTS });
const rnd = fc.double({ min: 0, max: 0.999999, noNaN: true });

describe('judgeAttempt (the delivery rule)', () => {
  it('succeeds on every 2xx', () => {
    fc.assert(fc.property(fc.integer({ min: 200, max: 299 }), attempt, rnd, (status, a, r) => {
      expect(judgeAttempt(answered(status), a, 1, r)._tag).toBe('Succeeded');
    }));
  });

  it('gives up at once on a 4xx other than 408, 425, 429', () => {
    const final = fc.integer({ min: 400, max: 499 }).filter((s) => ![408, 425, 429].includes(s));
    fc.assert(fc.property(final, attempt, rnd, (status, a, r) => {
      expect(judgeAttempt(answered(status), a, 1, r)._tag).toBe('FinalFailure');
    }));
  });

  it('retries everything else until 8 attempts are spent, with gaps of the schedule ±10 % times the scale', () => {
    const retried = fc.oneof(
      fc.constantFrom(408, 425, 429).map((s) => answered(s)),
      fc.integer({ min: 300, max: 399 }).map((s) => answered(s)),
      fc.integer({ min: 500, max: 599 }).map((s) => answered(s)),
      fc.constantFrom('timeout', 'connect', 'tls', 'dns', 'refused_target' as const).map(noAnswer),
    );
    fc.assert(
      fc.property(retried, attempt, rnd, fc.constantFrom(1, 0.001), (resp, a, r, scale) => {
        const v = judgeAttempt(resp, a, scale, r);
        if (a === MAX_DELIVERY_ATTEMPTS) {
          expect(v._tag).toBe('FinalFailure');
          return;
        }
        expect(v._tag).toBe('Retry');
        const base = RETRY_GAPS_MS[a - 1]! * scale;
        const d = (v as { delayMs: number }).delayMs;
        expect(d).toBeGreaterThanOrEqual(base * 0.9 - 1e-9);
        expect(d).toBeLessThanOrEqual(base * 1.1 + 1e-9);
      }),
    );
  });

  it('spreads 8 attempts over about 15 hours', () => {
    const total = RETRY_GAPS_MS.reduce((a, b) => a + b, 0);
    expect(RETRY_GAPS_MS).toHaveLength(MAX_DELIVERY_ATTEMPTS - 1);
    expect(total / 3_600_000).toBeGreaterThan(14);
    expect(total / 3_600_000).toBeLessThan(16);
  });

  it('stretches a gap to Retry-After, but never beyond the longest gap', () => {
    expect((judgeAttempt(answered(429, 600), 1, 1, 0.5) as { delayMs: number }).delayMs).toBe(600_000);
    expect((judgeAttempt(answered(503, 999_999), 1, 1, 0.5) as { delayMs: number }).delayMs).toBe(RETRY_GAPS_MS[6]);
    expect((judgeAttempt(answered(503, 1), 3, 1, 0.5) as { delayMs: number }).delayMs).toBe(RETRY_GAPS_MS[2]);
  });
});

describe('signing', () => {
  it('produces headers the receiver helper verifies, for one or several secrets, byte-identical to its own', () => {
    fc.assert(
      fc.property(fc.string(), fc.array(fc.string({ minLength: 1 }).map((s) => `whsec_${s}`), { minLength: 1, maxLength: 3 }), fc.integer({ min: 1, max: 4_000_000_000 }), (body, secrets, t) => {
        const header = signatureHeader(nodeCrypto, body, secrets, t);
        expect(header).toBe(receiverHeader(body, secrets, t));
        for (const s of secrets) expect(verifySignature(body, header, [s], { now: () => t * 1000 }).ok).toBe(true);
      }),
    );
  });

  it('signs with the old secret during the overlap window and only with the new one after it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 * SECRET_OVERLAP_MS }), (sinceRotation) => {
        const rotated = Date.UTC(2026, 10, 23);
        const secrets = [
          { id: 'new', retiresAt: null },
          { id: 'old', retiresAt: new Date(rotated + SECRET_OVERLAP_MS).toISOString() },
        ];
        const inForce = secretsInForce(secrets, new Date(rotated + sinceRotation).toISOString()).map((s) => s.id);
        expect(inForce).toEqual(sinceRotation < SECRET_OVERLAP_MS ? ['new', 'old'] : ['new']);
      }),
    );
  });

  it('builds the body with exactly the spec keys, redelivery_of only on a resend', () => {
    const base = { id: 'evt_1', type: 'document.created', createdAt: '2026-11-23T09:00:00.000Z', mode: 'live', data: { a: 1 }, redeliveryOf: null };
    expect(Object.keys(JSON.parse(webhookBody(base)))).toEqual(['id', 'type', 'created', 'test_mode', 'data']);
    expect(JSON.parse(webhookBody({ ...base, redeliveryOf: 'evt_0' }))).toMatchObject({ redelivery_of: 'evt_0', test_mode: false });
  });
});
