import { createHash, createHmac, randomInt, timingSafeEqual as nodeTimingSafeEqual } from 'node:crypto';
import { pooledRandomBytes } from './random.js';
import type { Clock, Crypto, IdGenerator, IdPrefix } from '@esig/core';

/** The machine's clock. */
export const systemClock: Clock = { now: () => new Date() };

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** node:crypto behind the core's Crypto port. */
export const nodeCrypto: Crypto = {
  sha256Hex: (data) => createHash('sha256').update(data).digest('hex'),
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
  let lastRandom: number[] = [];
  return {
    next: (prefix: IdPrefix) => {
      let t = clock.now().getTime();
      if (t <= lastTime) {
        // Same millisecond (or the clock stepped back): keep the previous time and count up.
        t = lastTime;
        let i = 15;
        while (i >= 0 && lastRandom[i] === 31) lastRandom[i--] = 0;
        // 2^80 ids in one millisecond: unreachable in practice, and a bug if it ever happens.
        if (i < 0) throw new Error('ULID random part overflow within one millisecond');
        lastRandom[i]!++;
      } else {
        const bytes = random(16);
        // 256 is a multiple of 32, so each character is uniform over the alphabet (80 random bits in all).
        lastRandom = Array.from(bytes, (b) => b % 32);
        lastTime = t;
      }
      let time = '';
      for (let i = 0, x = t; i < 10; i++) {
        time = CROCKFORD[x % 32] + time;
        x = Math.floor(x / 32);
      }
      return `${prefix}_${time}${lastRandom.map((d) => CROCKFORD[d]).join('')}`;
    },
  };
};
export * from './worker.js';
export * from './purger.js';
export * from './secret-box.js';
