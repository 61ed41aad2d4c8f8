import type { Mode, StoreError } from '@esig/core';
import { MAX_PURGE_BATCH, MODES, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
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
 * place the adapters touch io-ts's error format, so the codec library stays cheap to swap.
 */
export const decode =
  <A>(codec: t.Decoder<unknown, A>, what: string) =>
  (u: unknown): E.Either<StoreError, A> =>
    pipe(
      codec.decode(u),
      E.mapLeft((errors) => storeFailure(new RowDecodeError(what, describe(errors)))),
    );

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

/** `documents row doc_…`: names a row in decode errors without trusting the row's shape. */
export const rowName = (table: string, row: unknown, key = 'id'): string => {
  const id = typeof row === 'object' && row !== null && key in row ? (row as Record<string, unknown>)[key] : undefined;
  return typeof id === 'string' ? `${table} row ${id}` : `${table} row`;
};

/** A string from a fixed list (a status, a type): the domain's `as const` arrays become codecs. */
export const oneOf = <T extends string>(values: readonly T[], name: string): t.Type<T, T, unknown> => {
  const is = (u: unknown): u is T => typeof u === 'string' && (values as readonly string[]).includes(u);
  return new t.Type<T, T, unknown>(name, is, (u, c) => (is(u) ? t.success(u) : t.failure(u, c)), t.identity);
};

/**
 * `codec` or null: the codec `t.union([codec, t.null])` is, with its name, `is`, encoding and members, and
 * the same errors, but a null is accepted at once. io-ts tries a union's members in order and builds the
 * failure of each one that refuses, so every null read or written (an aggregate holds a dozen) cost a
 * thrown-away error of `codec` first, and every value a context entry for the branch. `codec` must refuse null,
 * as every codec of the rows does: one that turned null into something else would be bypassed.
 */
export const nullable = <C extends t.Mixed>(codec: C): t.UnionType<[C, t.NullC], t.TypeOf<C> | null, t.OutputOf<C> | null, unknown> => {
  const union = t.union([codec, t.null]);
  return new t.UnionType(
    union.name,
    union.is,
    (u, c) => {
      if (u === null) return t.success(null);
      const r = codec.validate(u, c);
      // Refused: the union itself says why, so the errors (and their paths) are exactly the union's.
      return E.isRight(r) ? r : union.validate(u, c);
    },
    union.encode,
    union.types,
  );
};

/**
 * `t.readonlyArray(item)`, whose `is` also refuses a list with holes. io-ts checks the elements with
 * `Array.prototype.every`, which skips holes, while decoding reads a hole as `undefined` (and JSON writes it
 * as null): a value `is` accepts must be one that decoding returns as it is (checkedAggregate rests on it).
 * It relies on `item` refusing `undefined`, as every item codec here does.
 */
export const listOf = <C extends t.Mixed>(item: C): t.ReadonlyArrayC<C> => {
  const list = t.readonlyArray(item);
  const is = (u: unknown): u is ReadonlyArray<t.TypeOf<C>> => {
    if (!Array.isArray(u)) return false;
    for (let i = 0; i < u.length; i++) if (!item.is(u[i])) return false;
    return true;
  };
  return new t.ReadonlyArrayType(list.name, is, list.validate, list.encode, item);
};

/**
 * `t.type(props)`, decoding the same values to the same results with the same errors, but without a context
 * entry per field on the way. io-ts's `type` builds, for every field of every row, a new context array and
 * entry before it checks the field: a webhook delivery reads and writes five rows, and those were the largest
 * part of what it allocates. Here the fields are checked against the row's own context first; only when one
 * is refused is the row decoded again by `t.type` itself, whose errors (and their paths) are then the answer.
 *
 * Two differences, for inputs no driver hands over: a refused row is read twice (a getter could answer
 * differently the second time), and a copy made with an own `__proto__` key keeps it as a key, where io-ts's
 * `Object.assign` would make it the copy's prototype (a JSON column parsed from `{"__proto__": …}` has one).
 */
export const rowType = <P extends t.Props>(props: P, name?: string): t.TypeC<P> => {
  const full = t.type(props, name);
  const keys = Object.keys(props);
  const types = keys.map((k) => props[k] as t.Mixed);
  const has = Object.prototype.hasOwnProperty;
  const validate = (u: unknown, c: t.Context): t.Validation<t.TypeOf<typeof full>> => {
    if (!t.UnknownRecord.is(u)) return full.validate(u, c);
    const o = u as Record<string, unknown>;
    let a = o;
    for (let i = 0; i < keys.length; i++) {
      const k = keys[i] as string;
      const ak = a[k];
      const r = (types[i] as t.Mixed).validate(ak, c);
      if (r._tag === 'Left') return full.validate(u, c);
      // As io-ts does: the input is copied once, at the first field whose decoded value differs.
      if (r.right !== ak || (r.right === undefined && !has.call(a, k))) {
        if (a === o) a = { ...o };
        a[k] = r.right;
      }
    }
    return t.success(a as t.TypeOf<typeof full>);
  };
  return new t.InterfaceType(full.name, full.is, validate, full.encode, props) as t.TypeC<P>;
};

export const ModeC = oneOf<Mode>(MODES, 'Mode');

/** The text `Date.prototype.toISOString` gives for years 0000–9999. */
export const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The two-digit number at `i` of a text whose shape ISO_MS has checked. */
const twoDigits = (s: string, i: number): number => (s.charCodeAt(i) - 48) * 10 + (s.charCodeAt(i + 1) - 48);

/** Days in month `m` (1–12) of year `y` of the proleptic Gregorian calendar, as `Date` counts them. */
const daysIn = (y: number, m: number): number => (m === 2 ? (y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28) : m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31);

/**
 * Whether a text of ISO_MS's shape is what `toISOString` gives for the instant it names: a real day of its month
 * (no 31st of February, which `Date.parse` reads as a day in March), hours to 23 (no 24:00), minutes and seconds
 * to 59. Checked from the digits: timestamps are checked on every row read and written, a dozen per webhook
 * delivery, and `Date.parse` cost about 2,400 machine instructions a call. A property test holds it to
 * `new Date(s).toISOString() === s`.
 */
const isCanonicalIsoMs = (s: string): boolean => {
  const year = twoDigits(s, 0) * 100 + twoDigits(s, 2);
  const month = twoDigits(s, 5);
  const day = twoDigits(s, 8);
  return month >= 1 && month <= 12 && day >= 1 && day <= daysIn(year, month) && twoDigits(s, 11) <= 23 && twoDigits(s, 14) <= 59 && twoDigits(s, 17) <= 59;
};

/**
 * `2026-11-23T08:00:00.000Z` exactly: the only spelling the ports speak. Values about to be written are
 * checked with it, so that what is read back is the same text; other spellings of the same instant would
 * also sort wrongly as text and break the keyset order.
 */
export const Timestamp = t.refinement(t.string, (s) => ISO_MS.test(s) && isCanonicalIsoMs(s), 'Timestamp');

/** Integer columns arrive as JS numbers; this refuses fractions and unsafe magnitudes. */
export const Int = t.refinement(t.number, Number.isSafeInteger, 'Int');

/** How many records one purge may delete: at least one, since SQLite reads a negative LIMIT as no limit at all. */
export const BatchLimit = t.refinement(Int, (n) => n >= 1 && n <= MAX_PURGE_BATCH, 'BatchLimit');

/** Decodes a row of `table` with `codec` and maps it to the port's type; errors name the row by its `key`. */
export const rowDecoder =
  <R, A>(codec: t.Decoder<unknown, R>, table: string, toDomain: (r: R) => A, key = 'id') =>
  (row: unknown): E.Either<StoreError, A> =>
    pipe(decode(codec, rowName(table, row, key))(row), E.map(toDomain));

/**
 * `codec`, or `fallback` when the value is absent: for a field added to stored JSON after rows were
 * written without it. A present but wrong value is still refused.
 */
export const withDefault = <A, O>(codec: t.Type<A, O, unknown>, fallback: A): t.Type<A, O, unknown> =>
  new t.Type<A, O, unknown>(codec.name, codec.is, (u, c) => (u === undefined ? t.success(fallback) : codec.validate(u, c)), codec.encode);
