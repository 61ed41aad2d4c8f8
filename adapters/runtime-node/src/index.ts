import { createHash, createHmac, randomBytes, randomInt, timingSafeEqual as nodeTimingSafeEqual } from 'node:crypto';
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
  timingSafeEqual: (a, b) => {
    const x = Buffer.from(a, 'utf8');
    const y = Buffer.from(b, 'utf8');
    // Lengths are not secret here (hex digests of fixed size); unequal lengths are simply unequal.
    return x.length === y.length && nodeTimingSafeEqual(x, y);
  },
};

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * ULID-shaped ids: 10 characters of millisecond time, then 16 of randomness (80 bits), Crockford base32.
 * Time first keeps ids roughly creation-ordered, which suits the (createdAt, id) keyset indexes.
 */
export const createUlidGenerator = (clock: Clock, random: (n: number) => Uint8Array = randomBytes): IdGenerator => ({
  next: (prefix: IdPrefix) => {
    let t = clock.now().getTime();
    let time = '';
    for (let i = 0; i < 10; i++) {
      time = CROCKFORD[t % 32] + time;
      t = Math.floor(t / 32);
    }
    const bytes = random(16);
    let rand = '';
    for (let i = 0; i < 16; i++) rand += CROCKFORD[bytes[i]! % 32];
    return `${prefix}_${time}${rand}`;
  },
});
