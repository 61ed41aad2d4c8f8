import type * as t from 'io-ts';

/**
 * The column types whose storage differs between the dialects, as codecs that decode to the same value
 * either way. With these, a table's row codec and its mapping to the port's type are written once.
 */
export interface ColumnCodecs {
  /** A point in time, decoded to the ports' ISO text (PostgreSQL: timestamptz text; SQLite: the ISO text itself). */
  readonly timestamp: t.Type<string, unknown, unknown>;
  /** A 64-bit integer, decoded to a safe JS integer (PostgreSQL: bigint text; SQLite: INTEGER). */
  readonly bigint: t.Type<number, unknown, unknown>;
  /** A boolean (PostgreSQL: boolean; SQLite: INTEGER 0 or 1). */
  readonly flag: t.Type<boolean, unknown, unknown>;
  /** A JSON value checked with `inner` (PostgreSQL: jsonb, parsed by the driver; SQLite: TEXT). */
  readonly json: <A>(inner: t.Type<A, unknown, unknown>) => t.Type<A, unknown, unknown>;
}
