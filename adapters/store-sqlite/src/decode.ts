import type { Mode, StoreError } from '@esig/core';
import { MODES, storeFailure } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as t from 'io-ts';

/**
 * Raised (as the `cause` of a StoreFailure) when a row read from the database, or about to be written to
 * it, does not have the shape the adapter expects. It names the table and row and lists each problem.
 */
export class RowDecodeError extends Error {
  override readonly name = 'RowDecodeError';
  constructor(
    readonly what: string,
    readonly problems: readonly string[],
  ) {
    super(`Undecodable ${what}: ${problems.join('; ')}`);
  }
}

// Values can be large (a whole aggregate, a PDF); the message only needs enough to find the row.
const preview = (u: unknown): string => {
  if (u instanceof Uint8Array) return `<${u.byteLength} bytes>`;
  const s = pipe(
    E.tryCatch(() => String(JSON.stringify(u)), () => null),
    E.getOrElse((): string => typeof u),
  );
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
};

const describe = (errors: t.Errors): string[] =>
  errors.map((e) => {
    const path = e.context
      .map((c) => c.key)
      .filter((k) => k !== '')
      .join('.');
    const expected = e.context[e.context.length - 1]?.type.name ?? 'value';
    return `${path || '(row)'}: expected ${expected}, got ${preview(e.value)}${e.message ? ` (${e.message})` : ''}`;
  });

/**
 * Decodes a row with `codec`, or fails with a StoreFailure naming `what` (a table and row id). The only
 * place the adapter touches io-ts's error format, so the codec library stays cheap to swap.
 */
export const decode =
  <A>(codec: t.Decoder<unknown, A>, what: string) =>
  (u: unknown): E.Either<StoreError, A> =>
    pipe(
      codec.decode(u),
      E.mapLeft((errors) => storeFailure(new RowDecodeError(what, describe(errors)))),
    );

/** A string from a fixed list (a status, a type): the domain's `as const` arrays become codecs. */
export const oneOf = <T extends string>(values: readonly T[], name: string): t.Type<T, T, unknown> => {
  const is = (u: unknown): u is T => typeof u === 'string' && (values as readonly string[]).includes(u);
  return new t.Type<T, T, unknown>(name, is, (u, c) => (is(u) ? t.success(u) : t.failure(u, c)), t.identity);
};

export const nullable = <C extends t.Mixed>(codec: C) => t.union([codec, t.null]);

export const ModeC = oneOf<Mode>(MODES, 'Mode');

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * `2026-11-23T08:00:00.000Z` exactly (what `Date.prototype.toISOString` gives). Other spellings of the
 * same instant would sort wrongly as text and break the keyset order, so they are refused.
 */
export const Timestamp = t.refinement(t.string, (s) => ISO_MS.test(s) && !Number.isNaN(Date.parse(s)), 'Timestamp');

/** SQLite INTEGER columns arrive as JS numbers; this refuses fractions and unsafe magnitudes. */
export const Int = t.refinement(t.number, Number.isSafeInteger, 'Int');

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

/** `documents row doc_…`: names a row in decode errors without trusting the row's shape. */
export const rowName = (table: string, row: unknown): string => {
  const id = typeof row === 'object' && row !== null && 'id' in row ? row.id : undefined;
  return typeof id === 'string' ? `${table} row ${id}` : `${table} row`;
};

/**
 * `codec`, or `fallback` when the value is absent: for a field added to stored JSON after rows were
 * written without it. A present but wrong value is still refused.
 */
export const withDefault = <A, O>(codec: t.Type<A, O, unknown>, fallback: A): t.Type<A, O, unknown> =>
  new t.Type<A, O, unknown>(codec.name, codec.is, (u, c) => (u === undefined ? t.success(fallback) : codec.validate(u, c)), codec.encode);

/** A boolean kept as INTEGER 0 or 1 (SQLite has no boolean type); any other value is refused. */
export const Flag = new t.Type<boolean, number, unknown>(
  'Flag',
  (u): u is boolean => typeof u === 'boolean',
  (u, c) => (u === 0 ? t.success(false) : u === 1 ? t.success(true) : t.failure(u, c, 'not 0 or 1')),
  (b) => (b ? 1 : 0),
);
