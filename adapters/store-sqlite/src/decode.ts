import type { ColumnCodecs } from '@esig/store-sql';
import { Int, Timestamp } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import * as t from 'io-ts';

// The dialect-neutral codecs, re-exported so the stores take every codec from this one module.
export { BatchLimit, Int, ModeC, RowDecodeError, Timestamp, decode, decodeAll, nullable, oneOf, rowDecoder, rowName, rowType, withDefault } from '@esig/store-sql';

/** Bytes from a BLOB column, as a plain Uint8Array view (the driver hands out Node Buffers). */
export const Bytes = new t.Type<Uint8Array, Uint8Array, unknown>(
  'Bytes',
  (u): u is Uint8Array => u instanceof Uint8Array,
  (u, c) => (u instanceof Uint8Array ? t.success(new Uint8Array(u.buffer, u.byteOffset, u.byteLength)) : t.failure(u, c)),
  t.identity,
);

/** A TEXT column holding JSON: parses it, then decodes the value with `inner`. */
export const JsonText = <A>(inner: t.Type<A, unknown, unknown>, name = `JsonText<${inner.name}>`) =>
  new t.Type<A, string, unknown>(
    name,
    inner.is,
    (u, c) => {
      if (typeof u !== 'string') return t.failure(u, c, 'not a string');
      const parsed = E.tryCatch(() => JSON.parse(u) as unknown, () => null);
      return E.isLeft(parsed) ? t.failure(u, c, 'not valid JSON') : inner.validate(parsed.right, c);
    },
    (a) => JSON.stringify(inner.encode(a)),
  );


/** A boolean kept as INTEGER 0 or 1 (SQLite has no boolean type); any other value is refused. */
export const Flag = new t.Type<boolean, number, unknown>(
  'Flag',
  (u): u is boolean => typeof u === 'boolean',
  (u, c) => (u === 0 ? t.success(false) : u === 1 ? t.success(true) : t.failure(u, c, 'not 0 or 1')),
  (b) => (b ? 1 : 0),
);

/** How this dialect's columns decode, for the row codecs shared with the PostgreSQL adapter. */
export const columnCodecs: ColumnCodecs = { timestamp: Timestamp, bigint: Int, flag: Flag, json: JsonText };
