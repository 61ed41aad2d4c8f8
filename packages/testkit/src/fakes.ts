import type { Clock, Crypto, IdGenerator, IdPrefix } from '@esig/core';
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// node:crypto directly rather than the runtime adapter: the test kit's root entry stays free of adapters.
const sha256Hex = (data: string | Uint8Array) => createHash('sha256').update(data).digest('hex');
const hmacSha256Hex = (key: string | Uint8Array, data: string) => createHmac('sha256', key).update(data, 'utf8').digest('hex');
const equalText = (a: string, b: string) => {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
};

/** A clock that moves only when a test moves it. */
export interface ManualClock extends Clock {
  /** Moves the clock forward (or back, with a negative `ms`). */
  advance(ms: number): void;
  /** Puts the clock at an instant. */
  set(date: Date | string): void;
}

const toMillis = (d: Date | string): number => {
  const ms = (typeof d === 'string' ? new Date(d) : d).getTime();
  if (!Number.isFinite(ms)) throw new Error(`not a valid instant: ${String(d)}`);
  return ms;
};

/** A controllable Clock. `now()` returns a fresh Date each time, so a caller mutating it changes nothing. */
export const createManualClock = (start: Date | string): ManualClock => {
  let ms = toMillis(start);
  return {
    now: () => new Date(ms),
    advance: (delta) => {
      if (!Number.isFinite(delta)) throw new Error(`not a finite duration: ${delta}`);
      ms += delta;
    },
    set: (date) => {
      ms = toMillis(date);
    },
  };
};

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * Deterministic ids of the production shape (`<prefix>_` + 26 Crockford base32 characters): a counter shared
 * by all prefixes, so every id is greater than every id made before it, whatever the prefix.
 */
export const createSequentialIds = (): IdGenerator => {
  let n = 0n;
  return {
    next: (prefix: IdPrefix) => {
      n += 1n;
      let rest = n;
      let body = '';
      for (let i = 0; i < 26; i++) {
        body = CROCKFORD[Number(rest % 32n)] + body;
        rest /= 32n;
      }
      return `${prefix}_${body}`;
    },
  };
};

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The Crypto port with reproducible randomness: `randomAlphanumeric` and `randomDigits` draw from a SHA-256
 * counter stream keyed by `seed` (rejection sampling keeps each character uniform), so two instances with the same seed
 * produce the same sequence. Hashing, MACs and comparison are node:crypto's.
 */
export const seededCrypto = (seed: string | number): Crypto => {
  let block = 0;
  let pool: number[] = [];
  const nextByte = (): number => {
    if (pool.length === 0) {
      const hex = sha256Hex(`esig-testkit-random:${String(seed)}:${block++}`);
      pool = Array.from({ length: 32 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
    }
    return pool.shift()!;
  };
  // 248 = 4 × 62: bytes at or above it are skipped so that `byte % 62` is uniform.
  const nextChar = (): string => {
    for (;;) {
      const b = nextByte();
      if (b < 248) return ALPHANUMERIC[b % 62]!;
    }
  };
  // 250 = 25 × 10, likewise for digits.
  const nextDigit = (): string => {
    for (;;) {
      const b = nextByte();
      if (b < 250) return String(b % 10);
    }
  };
  const checkLength = (length: number) => {
    if (!Number.isInteger(length) || length < 0) throw new Error(`not a valid length: ${length}`);
  };
  return {
    sha256Hex,
    hmacSha256Hex,
    randomAlphanumeric: (length) => {
      checkLength(length);
      return Array.from({ length }, nextChar).join('');
    },
    randomDigits: (length) => {
      checkLength(length);
      return Array.from({ length }, nextDigit).join('');
    },
    timingSafeEqual: equalText,
  };
};
