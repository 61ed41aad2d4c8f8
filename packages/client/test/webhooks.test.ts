import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { signatureHeader, verifySignature } from '@esig/webhooks';
import { WEBHOOK_VECTORS, bodyBytes } from '@esig/testkit/webhook-vectors';
import { Esig, EsigSignatureVerificationError } from '../src/index.js';

/** The verification's outcome: `ok`, or the reason it failed. A body that verified but is not JSON still verified. */
const verdict = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e) => (e instanceof EsigSignatureVerificationError ? e.reason : e instanceof SyntaxError ? 'ok' : Promise.reject(e)),
  );

describe('Esig.webhooks.constructEvent (WebCrypto)', () => {
  it.each(WEBHOOK_VECTORS.map((v) => [v.name, v] as const))('agrees with the shared vector: %s', async (_n, v) => {
    const now = () => v.nowS * 1000;
    expect(await verdict(Esig.webhooks.constructEvent(bodyBytes(v), v.header, v.secrets, v.toleranceS, { now }))).toBe(v.expect);
    if (typeof v.body === 'string') expect(await verdict(Esig.webhooks.constructEvent(v.body, v.header, v.secrets, v.toleranceS, { now }))).toBe(v.expect);
  });

  it('returns the parsed body when the signature verifies', async () => {
    const v = WEBHOOK_VECTORS[0]!;
    const event = await Esig.webhooks.constructEvent(v.body as string, v.header, v.secrets[0]!, 300, { now: () => v.nowS * 1000 });
    expect(event).toMatchObject({ type: 'request.completed', test_mode: true, data: { request_id: 'req_01JDQ4ZV8W3K5M7N9P2R4T6X01' } });
  });

  const body = fc.oneof(fc.string({ unit: 'binary', maxLength: 200 }), fc.uint8Array({ maxLength: 200 }));
  const secret = fc.string({ unit: 'binary', minLength: 1, maxLength: 40 });
  const t = fc.integer({ min: 0, max: 4_000_000_000 });

  it('decides exactly as @esig/webhooks on random bodies, secrets, clocks and tampered headers', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.array(secret, { minLength: 1, maxLength: 3 }), secret, t, fc.integer({ min: -400, max: 400 }), fc.nat(4), fc.string({ maxLength: 3 }), async (raw, signing, other, ts, drift, tamper, junk) => {
        let header = signatureHeader(raw, signing, ts);
        // Some headers stay genuine; others lose, change or gain a piece.
        if (tamper === 1) header = header.replace(/v1=./, `v1=${junk}`);
        if (tamper === 2) header = header.replace(/^t=\d+/, `t=${ts + 1}`);
        if (tamper === 3) header = `${header},v1=${junk}`;
        const receiver = tamper === 4 ? [other] : signing;
        const reference = verifySignature(raw, header, receiver, { now: () => (ts + drift) * 1000 });
        const got = await verdict(Esig.webhooks.constructEvent(raw, header, receiver, 300, { now: () => (ts + drift) * 1000 }));
        expect(got).toBe(reference.ok ? 'ok' : reference.reason);
      }),
      { numRuns: 300 },
    );
  });

  it('makes the header the server makes (generateTestHeader = signatureHeader)', async () => {
    await fc.assert(
      fc.asyncProperty(body, fc.array(secret, { minLength: 1, maxLength: 3 }), t, async (raw, secrets, ts) => {
        expect(await Esig.webhooks.generateTestHeader(raw, secrets, ts)).toBe(signatureHeader(raw, secrets, ts));
      }),
      { numRuns: 100 },
    );
  });
});
