import type { StoreError, StoreResult } from '@esig/core';
import { concurrentModification, storeFailure } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';

/** Whether a statement only reads, or writes. */
export type Access = 'read' | 'write';

/** A place to run statements: the pool (each statement its own transaction) or one transaction's client. */
export interface Conn {
  query(text: string, values: readonly unknown[]): Promise<pg.QueryResult>;
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
  (conn: Conn, access: Access, text: string, values: readonly unknown[], onConflict?: () => StoreError): StoreResult<pg.QueryResult> =>
  async () => {
    const blocked = conn.unusable(access);
    if (blocked !== null) return E.left(storeFailure(blocked));
    try {
      return E.right(await conn.query(text, values));
    } catch (e) {
      return E.left(toStoreError(e, onConflict));
    }
  };

/** A pg identifier in double quotes (channel names for LISTEN). */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
