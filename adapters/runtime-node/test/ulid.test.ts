import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Clock, IdPrefix } from '@esig/core';
import { createUlidGenerator, nodeCrypto } from '../src/index.js';

const PREFIXES: IdPrefix[] = ['doc', 'req', 'rcp', 'fld', 'coc', 'whe', 'dlv', 'key', 'ses', 'log', 'evt', 'org'];
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** ULID time is 48 bits of milliseconds. */
const timeArb = fc.integer({ min: 0, max: 2 ** 48 - 1 });
const fixedClock = (ms: number): Clock => ({ now: () => new Date(ms) });
const decodeRandom = (id: string) => [...id.slice(-16)].reduce((n, c) => n * 32n + BigInt(CROCKFORD.indexOf(c)), 0n);
const decodeTime = (id: string) => [...id.slice(id.indexOf('_') + 1, id.indexOf('_') + 11)].reduce((n, c) => n * 32 + CROCKFORD.indexOf(c), 0);

describe('createUlidGenerator', () => {
  it('makes <prefix>_ followed by 26 Crockford base32 characters', () => {
    fc.assert(
      fc.property(fc.constantFrom(...PREFIXES), timeArb, (prefix, t) => {
        expect(createUlidGenerator(fixedClock(t)).next(prefix)).toMatch(new RegExp(`^${prefix}_[0-9A-HJKMNP-TV-Z]{26}$`));
      }),
    );
  });

  it('never repeats an id, even within one millisecond', () => {
    const ids = createUlidGenerator(fixedClock(Date.parse('2025-01-01T00:00:00Z')));
    const seen = new Set(Array.from({ length: 20_000 }, () => ids.next('doc')));
    expect(seen.size).toBe(20_000);
  });

  it('puts the clock first: the time part encodes the millisecond and sorts like it', () => {
    fc.assert(
      fc.property(timeArb, timeArb, fc.constantFrom(...PREFIXES), (a, b, prefix) => {
        const ia = createUlidGenerator(fixedClock(a)).next(prefix);
        const ib = createUlidGenerator(fixedClock(b)).next(prefix);
        expect(decodeTime(ia)).toBe(a);
        const ta = ia.slice(4, 14);
        const tb = ib.slice(4, 14);
        expect(ta < tb ? -1 : ta > tb ? 1 : 0).toBe(Math.sign(a - b));
      }),
      { numRuns: 500 },
    );
  });

  it('sorts in creation order, within a millisecond and when the clock steps back, never behind the latest time', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constant(0), fc.integer({ min: -5_000, max: 5_000 }), fc.integer({ min: 1, max: 10_000_000 })), {
          minLength: 1,
          maxLength: 200,
        }),
        (gaps) => {
          let t = Date.parse('2025-01-01T00:00:00Z');
          let latest = Number.NEGATIVE_INFINITY;
          const ids = createUlidGenerator({ now: () => new Date(t) });
          const made = gaps.map((g) => {
            t += g;
            latest = Math.max(latest, t);
            const id = ids.next('evt');
            expect(decodeTime(id)).toBe(latest);
            return id;
          });
          made.slice(1).forEach((id, i) => expect(id > made[i]!, `${id} after ${made[i]}`).toBe(true));
        },
      ),
    );
  });

  it('takes the random part from the random source, and counts up by one within a millisecond', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 16 }), (x) => {
        const a = createUlidGenerator(fixedClock(0), () => x);
        const first = a.next('key');
        // The same source gives the same id; the second id of a millisecond is the first plus one.
        expect(createUlidGenerator(fixedClock(0), () => x).next('key')).toBe(first);
        expect(decodeRandom(a.next('key'))).toBe(decodeRandom(first) + 1n);
      }),
    );
    const zeros = createUlidGenerator(fixedClock(0), () => new Uint8Array(16)).next('key');
    const ones = createUlidGenerator(fixedClock(0), () => new Uint8Array(16).fill(255)).next('key');
    expect(zeros).not.toBe(ones);
  });
});

describe('nodeCrypto', () => {
  it('hashes and MACs with the standard vectors', () => {
    expect(nodeCrypto.sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(nodeCrypto.sha256Hex(new TextEncoder().encode('abc'))).toBe(nodeCrypto.sha256Hex('abc'));
    expect(nodeCrypto.hmacSha256Hex('key', 'The quick brown fox jumps over the lazy dog')).toBe(
      'f7bc83f430538424b13298e6aa6fb143ef4d59a14946175997479dbc2d1a3cd8',
    );
  });

  it('hashes any text as UTF-8 and any bytes as they are, as a Hash object does', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) })), (text) => {
        expect(nodeCrypto.sha256Hex(text)).toBe(createHash('sha256').update(text, 'utf8').digest('hex'));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        expect(nodeCrypto.sha256Hex(bytes)).toBe(createHash('sha256').update(bytes).digest('hex'));
      }),
    );
  });

  it('draws alphanumerics of the asked length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), (n) => {
        expect(nodeCrypto.randomAlphanumeric(n)).toMatch(new RegExp(`^[A-Za-z0-9]{${n}}$`));
      }),
    );
  });

  it('compares strings for equality, including unequal lengths', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        expect(nodeCrypto.timingSafeEqual(a, b)).toBe(a === b);
        expect(nodeCrypto.timingSafeEqual(a, a)).toBe(true);
      }),
    );
  });
});
