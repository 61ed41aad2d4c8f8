import { createHmac, hash, randomInt, timingSafeEqual as nodeTimingSafeEqual } from 'node:crypto';
import { pooledRandomBytes } from './random.js';
import type { Clock, Crypto, IdGenerator, IdPrefix } from '@esig/core';

/** The machine's clock. */
export const systemClock: Clock = { now: () => new Date() };

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** node:crypto behind the core's Crypto port. */
export const nodeCrypto: Crypto = {
  // One call, no Hash object: about half the cost of createHash for the short inputs hashed on every request
  // (an API key, an Idempotency-Key's fingerprint). Strings are hashed as UTF-8, as createHash does.
  sha256Hex: (data) => hash('sha256', data, 'hex'),
  hmacSha256Hex: (key, data) => createHmac('sha256', key).update(data, 'utf8').digest('hex'),
  // randomInt draws without modulo bias, so every character is uniform.
  randomAlphanumeric: (length) => Array.from({ length }, () => ALPHANUMERIC[randomInt(ALPHANUMERIC.length)]).join(''),
  randomDigits: (length) => Array.from({ length }, () => String(randomInt(10))).join(''),
  timingSafeEqual: (a, b) => {
    const x = Buffer.from(a, 'utf8');
    const y = Buffer.from(b, 'utf8');
    // Lengths are not secret here (hex digests of fixed size); unequal lengths are simply unequal.
    return x.length === y.length && nodeTimingSafeEqual(x, y);
  },
};

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * ULID-shaped ids: 10 characters of millisecond time, then 16 random characters (80 bits), Crockford base32.
 * Monotonic within a millisecond (the random part of a second id in the same millisecond is the previous
 * one plus one), so ids made by one process sort in creation order, which keeps the (createdAt, id)
 * keyset order equal to insertion order.
 */

export const createUlidGenerator = (clock: Clock, random: (n: number) => Uint8Array = pooledRandomBytes): IdGenerator => {
  let lastTime = -1;
  // Every API call makes several ids, mostly within one millisecond: the time part is encoded once per
  // millisecond, and the random part is kept as digits in place (no array made, mapped and joined per id).
  let timePart = '';
  const digits = new Uint8Array(16);
  const encodeDigits = (): string => {
    let text = '';
    for (let i = 0; i < 16; i++) text += CROCKFORD[digits[i]!];
    return text;
  };
  return {
    next: (prefix: IdPrefix) => {
      const t = clock.now().getTime();
      if (t <= lastTime) {
        // Same millisecond (or the clock stepped back): keep the previous time and count up.
        let i = 15;
        while (i >= 0 && digits[i] === 31) digits[i--] = 0;
        // 2^80 ids in one millisecond: unreachable in practice, and a bug if it ever happens.
        if (i < 0) throw new Error('ULID random part overflow within one millisecond');
        digits[i]!++;
      } else {
        const bytes = random(16);
        // 256 is a multiple of 32, so each character is uniform over the alphabet (80 random bits in all).
        for (let i = 0; i < 16; i++) digits[i] = bytes[i]! % 32;
        let time = '';
        for (let i = 0, x = t; i < 10; i++) {
          time = CROCKFORD[x % 32] + time;
          x = Math.floor(x / 32);
        }
        timePart = time;
        lastTime = t;
      }
      return `${prefix}_${timePart}${encodeDigits()}`;
    },
  };
};
export * from './worker.js';
export * from './purger.js';
export * from './secret-box.js';
