import { describe, expect, it } from 'vitest';
import { WEBHOOK_VECTORS, bodyBytes } from '@esig/testkit/webhook-vectors';
import { verifySignature } from '../src/index.js';

// The shared known-answer vectors; @esig/client's WebCrypto verifier runs the same list.
describe('the shared webhook vectors', () => {
  it.each(WEBHOOK_VECTORS.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    const got = verifySignature(bodyBytes(v), v.header, v.secrets, { toleranceS: v.toleranceS, now: () => v.nowS * 1000 });
    expect(got.ok ? 'ok' : got.reason).toBe(v.expect);
    if (typeof v.body === 'string') {
      const text = verifySignature(v.body, v.header, v.secrets, { toleranceS: v.toleranceS, now: () => v.nowS * 1000 });
      expect(text.ok ? 'ok' : text.reason).toBe(v.expect);
    }
  });
});
