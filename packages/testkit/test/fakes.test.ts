import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { IdPrefix } from '@esig/core';
import { createManualClock, createSequentialIds, seededCrypto } from '../src/fakes.js';

const PREFIXES: IdPrefix[] = ['doc', 'req', 'rcp', 'fld', 'coc', 'whe', 'dlv', 'key', 'ses', 'log', 'evt', 'org'];

describe('createManualClock', () => {
  it('stands still until moved, and hands out fresh Dates', () => {
    const clock = createManualClock('2025-01-01T00:00:00.000Z');
    const t = clock.now();
    t.setTime(0);
    expect(clock.now().toISOString()).toBe('2025-01-01T00:00:00.000Z');
    clock.advance(1500);
    expect(clock.now().toISOString()).toBe('2025-01-01T00:00:01.500Z');
    clock.set(new Date('2030-06-01T12:00:00.000Z'));
    expect(clock.now().toISOString()).toBe('2030-06-01T12:00:00.000Z');
    expect(() => createManualClock('not a date')).toThrow();
  });
});

describe('createSequentialIds', () => {
  it('makes production-shaped ids, strictly increasing across prefixes, the same in every instance', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PREFIXES), { minLength: 1, maxLength: 200 }), (prefixes) => {
        const a = createSequentialIds();
        const b = createSequentialIds();
        const ids = prefixes.map((p) => a.next(p));
        expect(prefixes.map((p) => b.next(p))).toEqual(ids);
        ids.forEach((id, i) => {
          expect(id).toMatch(new RegExp(`^${prefixes[i]}_[0-9A-HJKMNP-TV-Z]{26}$`));
          if (i > 0) expect(id.slice(4) > ids[i - 1]!.slice(4)).toBe(true);
        });
      }),
    );
  });
});

describe('seededCrypto', () => {
  it('draws the same alphanumerics for the same seed, and others for another seed', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 200 }), (seed, n) => {
        const s = seededCrypto(seed).randomAlphanumeric(n);
        expect(s).toMatch(/^[A-Za-z0-9]*$/);
        expect(s).toHaveLength(n);
        expect(seededCrypto(seed).randomAlphanumeric(n)).toBe(s);
      }),
    );
    expect(seededCrypto(1).randomAlphanumeric(32)).not.toBe(seededCrypto(2).randomAlphanumeric(32));
    const c = seededCrypto('x');
    expect(c.randomAlphanumeric(32)).not.toBe(c.randomAlphanumeric(32));
  });

  it('uses every character about equally often', () => {
    const counts = new Map<string, number>();
    for (const ch of seededCrypto('uniform').randomAlphanumeric(62_000)) counts.set(ch, (counts.get(ch) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Expected 1000 each; 5 standard deviations is about ±160.
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(160);
  });

  it('draws the same digits for the same seed, each digit about equally often', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 50 }), (seed, n) => {
        const s = seededCrypto(seed).randomDigits(n);
        expect(s).toMatch(new RegExp(`^[0-9]{${n}}$`));
        expect(seededCrypto(seed).randomDigits(n)).toBe(s);
      }),
    );
    const c = seededCrypto('digits');
    expect(c.randomDigits(12)).not.toBe(c.randomDigits(12));
    expect(() => c.randomDigits(-1)).toThrow();
    const counts = new Map<string, number>();
    for (const d of seededCrypto('uniform').randomDigits(10_000)) counts.set(d, (counts.get(d) ?? 0) + 1);
    expect(counts.size).toBe(10);
    // Expected 1000 each; 5 standard deviations is about ±150.
    for (const n of counts.values()) expect(Math.abs(n - 1000)).toBeLessThan(150);
  });

  it('hashes like node:crypto', () => {
    const c = seededCrypto(0);
    expect(c.sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(c.hmacSha256Hex('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
    expect(c.timingSafeEqual('a', 'a')).toBe(true);
    expect(c.timingSafeEqual('a', 'b')).toBe(false);
  });
});
