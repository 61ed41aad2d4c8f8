/**
 * Hashing, MACs and randomness. Synchronous because they are CPU work, not I/O; behind a port because
 * randomness must be replaceable in tests and the core must not import a platform's crypto module.
 */
export interface Crypto {
  /** Lower-case hex SHA-256 of the bytes (strings are taken as UTF-8). */
  sha256Hex(data: Uint8Array | string): string;
  /** Lower-case hex HMAC-SHA256 of `data` under `key`. */
  hmacSha256Hex(key: Uint8Array | string, data: string): string;
  /** `length` characters from [A-Za-z0-9], drawn uniformly from a cryptographic source. */
  randomAlphanumeric(length: number): string;
  /** `length` decimal digits drawn uniformly (one-time codes). */
  randomDigits(length: number): string;
  /** Equality that takes the same time for every pair of equal-length inputs. */
  timingSafeEqual(a: string, b: string): boolean;
}
