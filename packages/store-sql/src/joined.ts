import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';

/**
 * Two tables' rows read by one join, kept apart: the second table's columns are selected under a prefix
 * (`e.id AS "e.id"`), and `splitJoined` takes them back out as a row of their own, which that table's row
 * codec then decodes as if it had been read alone.
 */

/** `columns` (a comma-separated list) qualified with the table alias `alias`: `d.id, d.org_id, …`. */
export const qualifiedColumns = (columns: string, alias: string): string =>
  columns
    .split(',')
    .map((c) => `${alias}.${c.trim()}`)
    .join(', ');

/** `columns` of the table aliased `alias`, each selected under the name `<alias>.<column>`. */
export const prefixedColumns = (columns: string, alias: string): string =>
  columns
    .split(',')
    .map((c) => `${alias}.${c.trim()} AS "${alias}.${c.trim()}"`)
    .join(', ');

/**
 * A joined row split in two: the columns without the prefix `<alias>.`, and those with it (the prefix
 * removed), or null when the join found no row there (its `id`, never null in a table, is null).
 */
export const splitJoined = (row: Readonly<Record<string, unknown>>, alias: string): { own: Record<string, unknown>; joined: Record<string, unknown> | null } => {
  const prefix = `${alias}.`;
  const own: Record<string, unknown> = {};
  const joined: Record<string, unknown> = {};
  // Keys, not Object.entries: a joined row has some thirty columns, and their [key, value] pairs were a tenth
  // of what a webhook delivery allocates.
  for (const k of Object.keys(row)) {
    if (k.startsWith(prefix)) joined[k.slice(prefix.length)] = row[k];
    else own[k] = row[k];
  }
  return { own, joined: joined.id === null || joined.id === undefined ? null : joined };
};

/**
 * Decodes a joined row: its own columns with `decodeOwn`, and the columns under `alias` with `decodeOther`
 * (null when the join found no row there).
 */
export const decodeJoined =
  <Err, A, B>(decodeOwn: (row: unknown) => E.Either<Err, A>, alias: string, decodeOther: (row: unknown) => E.Either<Err, B>) =>
  (row: unknown): E.Either<Err, readonly [A, B | null]> => {
    const { own, joined } = splitJoined(row as Readonly<Record<string, unknown>>, alias);
    return pipe(
      decodeOwn(own),
      E.chain(
        (a): E.Either<Err, readonly [A, B | null]> =>
          joined === null
            ? E.right([a, null])
            : pipe(
                decodeOther(joined),
                E.map((b) => [a, b]),
              ),
      ),
    );
  };
