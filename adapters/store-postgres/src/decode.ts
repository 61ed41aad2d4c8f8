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
 * `2026-11-23T08:00:00.000Z` exactly (what `Date.prototype.toISOString` gives): the only spelling the
 * ports speak. Values about to be written are checked with it, so that what is read back is the same text.
 */
export const Timestamp = t.refinement(t.string, (s) => ISO_MS.test(s) && !Number.isNaN(Date.parse(s)), 'Timestamp');

// PostgreSQL's text output of timestamptz (DateStyle ISO): `2026-11-23 08:00:00.123+00`, the fraction
// omitted when zero, ` BC` after years before 1, the offset that of the session's TimeZone (the adapter's
// sessions run in UTC, but a URL may set another zone, whose local year can reach 10000 and whose
// historical offsets can have seconds: `+05:41:16`).
const PG_TIMESTAMPTZ = /^(\d{4,})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?([+-])(\d{2})(?::(\d{2}))?(?::(\d{2}))?( BC)?$/;

/**
 * A timestamptz column as the driver hands it over (the adapter keeps PostgreSQL's text instead of letting
 * the driver build a Date), decoded into the ports' ISO form. Refuses what cannot round-trip exactly: a
 * value finer than a millisecond (written by hand), infinity, instants outside years 0000–9999 UTC.
 */
export const TimestampColumn = new t.Type<string, string, unknown>(
  'timestamptz',
  (u): u is string => typeof u === 'string' && ISO_MS.test(u),
  (u, c) => {
    if (typeof u !== 'string') return t.failure(u, c, 'not timestamptz text');
    const m = PG_TIMESTAMPTZ.exec(u);
    if (m === null) return t.failure(u, c, 'not a finite timestamptz');
    const [, year, month, day, hour, minute, second, frac, sign, offH, offM, offS, bc] = m;
    const fraction = (frac ?? '').padEnd(6, '0');
    if (fraction.slice(3) !== '000') return t.failure(u, c, 'finer than a millisecond');
    // Built field by field: Date.parse and Date.UTC would misread years below 100 or above 9999.
    const local = new Date(0);
    local.setUTCFullYear(bc === undefined ? Number(year) : 1 - Number(year), Number(month) - 1, Number(day));
    local.setUTCHours(Number(hour), Number(minute), Number(second), Number(fraction.slice(0, 3)));
    const offsetMs = (Number(offH) * 3600 + Number(offM ?? 0) * 60 + Number(offS ?? 0)) * 1000;
    const instant = new Date(local.getTime() - (sign === '-' ? -offsetMs : offsetMs));
    if (Number.isNaN(instant.getTime())) return t.failure(u, c, 'not a valid date');
    const iso = instant.toISOString();
    return ISO_MS.test(iso) ? t.success(iso) : t.failure(u, c, 'outside years 0000-9999 UTC');
  },
  t.identity,
);

/** integer columns arrive as JS numbers; this refuses fractions and unsafe magnitudes. */
export const Int = t.refinement(t.number, Number.isSafeInteger, 'Int');

/** bigint columns (and COUNT) arrive as decimal text, which the driver leaves alone; safe integers only. */
export const Int8 = new t.Type<number, string, unknown>(
  'bigint',
  (u): u is number => typeof u === 'number' && Number.isSafeInteger(u),
  (u, c) => {
    if (typeof u === 'number') return Number.isSafeInteger(u) ? t.success(u) : t.failure(u, c, 'not a safe integer');
    if (typeof u !== 'string' || !/^-?\d+$/.test(u)) return t.failure(u, c, 'not bigint text');
    const n = Number(u);
    return Number.isSafeInteger(n) ? t.success(n) : t.failure(u, c, 'beyond the safe integer range');
  },
  String,
);

/**
 * Bytes from a bytea column, as a plain Uint8Array of their own. The driver's Buffers may be views into a
 * shared slab; copying means a caller who writes into the result touches nothing else.
 */
export const Bytes = new t.Type<Uint8Array, Uint8Array, unknown>(
  'Bytes',
  (u): u is Uint8Array => u instanceof Uint8Array,
  (u, c) => (u instanceof Uint8Array ? t.success(new Uint8Array(u)) : t.failure(u, c)),
  t.identity,
);

/** `documents row doc_…`: names a row in decode errors without trusting the row's shape. */
export const rowName = (table: string, row: unknown, key = 'id'): string => {
  const id = typeof row === 'object' && row !== null && key in row ? (row as Record<string, unknown>)[key] : undefined;
  return typeof id === 'string' ? `${table} row ${id}` : `${table} row`;
};

/** Decodes every row, or fails with the first undecodable one. */
export const decodeAll =
  <A>(decodeRow: (row: unknown) => E.Either<StoreError, A>) =>
  (rows: readonly unknown[]): E.Either<StoreError, readonly A[]> => {
    const out: A[] = [];
    for (const row of rows) {
      const r = decodeRow(row);
      if (E.isLeft(r)) return r;
      out.push(r.right);
    }
    return E.right(out);
  };
