import { randomFillSync } from 'node:crypto';

/**
 * Random bytes drawn from the operating system a few kilobytes at a time: every API call makes several ids
 * (16 bytes each) and may seal a response (a 12-byte IV), and one system call for each was a measurable
 * share of a request. The bytes are the same CSPRNG output either way; each is handed out once.
 */
export const pooledRandomBytes: (n: number) => Uint8Array = (() => {
  const pool = Buffer.alloc(4096);
  let used = pool.length;
  return (n: number): Uint8Array => {
    if (n > pool.length) return randomFillSync(Buffer.alloc(n));
    if (used + n > pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    // A copy: the pool's bytes are overwritten on the next refill.
    const out = Uint8Array.prototype.slice.call(pool, used, used + n);
    used += n;
    return out;
  };
})();
