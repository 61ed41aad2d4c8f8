import fc from 'fast-check';

/** Any text: every code point, lone surrogates included (they sign as U+FFFD, as UTF-8 encoding does). */
export const textBody = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom('\uD800', '\uDFFF', 'é', '€', '😀', '{', '"', '.', ','), maxLength: 50 }),
);

/** Any bytes, valid UTF-8 or not. */
export const byteBody = fc.uint8Array({ maxLength: 300 });

export const rawBody = fc.oneof(textBody, byteBody);

/** A secret as esig issues them (`whsec_` + random), or any other non-empty text. */
export const secret = fc.oneof(
  fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'), minLength: 24, maxLength: 48 }).map((s) => `whsec_${s}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }),
);

/**
 * Two secrets that are different HMAC keys. HMAC pads a short key with zero bytes, so `a` and `a\0` are
 * the same key, and lone surrogates of either kind encode to the same U+FFFD: compare the padded bytes.
 */
const hmacKey = (s: string): string => Buffer.from(s, 'utf8').toString('hex').replace(/(00)+$/, '');
export const secretPair = fc.tuple(secret, secret).filter(([a, b]) => hmacKey(a) !== hmacKey(b));

/** Unix seconds, 2001 to 2100. */
export const timestampS = fc.integer({ min: 1_000_000_000, max: 4_102_444_800 });

/** A JSON document with at least one key, so `JSON.stringify(v, null, 2)` differs from the compact form. */
export const jsonObject = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 3 }), { minKeys: 1, maxKeys: 6 });
