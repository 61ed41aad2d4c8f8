import * as E from 'fp-ts/lib/Either.js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createAesGcmSecretBox } from '../src/index.js';

const key = (b: number) => new Uint8Array(32).fill(b);

describe('createAesGcmSecretBox', () => {
  it('opens what it sealed, never shows the plaintext, and uses a fresh IV each time', () => {
    const box = createAesGcmSecretBox(key(1));
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), (s) => {
        const sealed = box.seal(s);
        expect(box.open(sealed)).toEqual(E.right(s));
        expect(sealed).not.toContain(s.length >= 4 ? s : '\u0000');
        expect(box.seal(s)).not.toBe(sealed);
      }),
    );
  });

  it('never repeats an IV, across many refills of the random pool', () => {
    const box = createAesGcmSecretBox(key(1));
    // 4 KiB of pool is 341 IVs: 5,000 seals refill it a dozen times and cross its edges.
    const ivs = Array.from({ length: 5_000 }, () => box.seal('same text').split('.')[1]!);
    expect(new Set(ivs).size).toBe(ivs.length);
    for (const iv of ivs.slice(0, 3)) expect(Buffer.from(iv, 'base64url')).toHaveLength(12);
  });

  it('refuses a tampered value and a value sealed under another key', () => {
    const box = createAesGcmSecretBox(key(1));
    const sealed = box.seal('whsec_example');
    const parts = sealed.split('.');
    const flipped = parts[2]!.startsWith('A') ? `B${parts[2]!.slice(1)}` : `A${parts[2]!.slice(1)}`;
    expect(E.isLeft(box.open([parts[0], parts[1], flipped, parts[3]].join('.')))).toBe(true);
    expect(E.isLeft(createAesGcmSecretBox(key(2)).open(sealed))).toBe(true);
    expect(E.isLeft(box.open('garbage'))).toBe(true);
  });

  it('refuses a master key of the wrong size', () => {
    expect(() => createAesGcmSecretBox(new Uint8Array(16))).toThrow(/32 bytes/);
  });
});
