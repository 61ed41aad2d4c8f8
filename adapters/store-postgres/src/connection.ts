import type { StoreError, StoreResult } from '@esig/core';
import { concurrentModification, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';

/**
 * Whether a statement only reads, or writes. A `read` must be a plain read (no locks it relies on, no function
 * that writes): as a transaction's first statement it may go out behind `BEGIN` before `BEGIN` has answered,
 * and should `BEGIN` fail it runs outside any transaction (see the unit of work).
 */
export type Access = 'read' | 'write';

/**
 * A statement prepared once per connection and executed by name afterwards: the server parses and
 * analyses it once, and after a few executions may keep one generic plan for it. Worth it on the per-request
 * path, where it saves a good part of each round trip's server work; but only for statements whose plan
 * cannot go wrong without the parameters' values: primary-key and unique-key lookups, inserts, the fenced
 * by-id lookups. A statement whose best plan depends on the values (a page of a tenant's range) stays a
 * plain text, planned for its values every time.
 */
export interface Prepared {
  readonly name: string;
  readonly text: string;
}

/** Names must be unique per text: one name, one statement, for the life of the process. */
const preparedNames = new Map<string, string>();

/** A named statement (see `Prepared`); `name` is unique among them. */
export const prepared = (name: string, text: string): Prepared => {
  const full = `esig_${name}`;
  const known = preparedNames.get(full);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${full} is defined twice with different texts`);
  preparedNames.set(full, text);
  return { name: full, text };
};

/** The driver's query config for a plain or a prepared statement. */
export const queryConfig = (stmt: string | Prepared, values: readonly unknown[]): pg.QueryConfig =>
  typeof stmt === 'string' ? { text: stmt, values: [...values] } : { name: stmt.name, text: stmt.text, values: [...values] };

/** A place to run statements: the pool (each statement its own transaction) or one transaction's client. */
export interface Conn {
  /**
   * Runs one statement. `access` says whether it only reads: a transaction may send its first read together
   * with its `BEGIN` (see the unit of work), never a write.
   */
  query(stmt: string | Prepared, values: readonly unknown[], access: Access): Promise<pg.QueryResult>;
  /** Why a statement of this kind must not run on this handle now, or `null` when it may. */
  unusable(access: Access): Error | null;
}

const TIMESTAMPTZ_OID = 1184;

/**
 * The driver's type parsers, except that timestamptz stays PostgreSQL's text: a JS Date would silently
 * drop anything finer than a millisecond, and the row codecs should see (and refuse) that instead.
 * bigint already stays text in the driver; the codecs turn it into safe integers.
 */
export const TYPES: pg.CustomTypesConfig = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === TIMESTAMPTZ_OID && format !== 'binary'
      ? (text: string) => text
      : pg.types.getTypeParser(oid, format)) as pg.CustomTypesConfig['getTypeParser'],
};

/** The SQLSTATE of a driver error, if it has one. */
export const sqlState = (e: unknown): string | undefined =>
  e instanceof Error && 'code' in e && typeof e.code === 'string' ? e.code : undefined;

/**
 * SQLSTATEs that mean "another transaction got there first" rather than a fault: a unique violation,
 * a serialization failure, a deadlock the server broke by aborting this side, and a lock not obtained
 * within `lock_timeout`. The caller may retry the whole command, which is what ConcurrentModification says.
 */
const LOST_RACE = new Set(['23505', '40001', '40P01', '55P03']);

/** True for a driver error that means a lost race (see LOST_RACE), not a fault. */
export const isLostRace = (e: unknown): boolean => {
  const code = sqlState(e);
  return code !== undefined && LOST_RACE.has(code);
};

/** Turns a thrown driver error into a StoreError; a lost race becomes `onConflict()` when given. */
export const toStoreError = (e: unknown, onConflict?: () => StoreError): StoreError => {
  if (!isLostRace(e)) return storeFailure(e);
  if (onConflict !== undefined) return onConflict();
  const err = e as { table?: unknown; constraint?: unknown; code?: unknown };
  return concurrentModification(typeof err.table === 'string' ? err.table : 'row', typeof err.constraint === 'string' ? err.constraint : String(err.code));
};

/**
 * The driver edge: runs one statement when the task runs (not when it is built) and turns a thrown driver
 * error into a StoreError. `onConflict` names what a lost race is about, for the ConcurrentModification.
 */
export const run =
  (conn: Conn, access: Access, text: string | Prepared, values: readonly unknown[], onConflict?: () => StoreError): StoreResult<pg.QueryResult> =>
  async () => {
    const blocked = conn.unusable(access);
    if (blocked !== null) return E.left(storeFailure(blocked));
    try {
      return E.right(await conn.query(text, values, access));
    } catch (e) {
      return E.left(toStoreError(e, onConflict));
    }
  };

/** A pg identifier in double quotes (channel names for LISTEN). */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
