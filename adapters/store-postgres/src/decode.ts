import type { ColumnCodecs } from '@esig/store-sql';
import { ISO_MS } from '@esig/store-sql';
import * as t from 'io-ts';

// The dialect-neutral codecs, re-exported so the stores take every codec from this one module.
export { BatchLimit, Int, ModeC, RowDecodeError, Timestamp, decode, decodeAll, nullable, oneOf, rowDecoder, rowName, rowType } from '@esig/store-sql';

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

/** How this dialect's columns decode, for the row codecs shared with the SQLite adapter (jsonb arrives parsed). */
export const columnCodecs: ColumnCodecs = { timestamp: TimestampColumn, bigint: Int8, flag: t.boolean, json: (inner) => inner };
