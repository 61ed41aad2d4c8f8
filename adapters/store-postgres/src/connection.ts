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
 * path, where it saves a good part of each round trip's server work.
 *
 * A generic plan, though, is made once, for the table's size at that moment, and the connection keeps it
 * until the table's statistics change. After an ANALYZE of a table of a few pages a sequential scan is the
 * cheaper plan even for one row by primary key; with autovacuum off (or behind), the connection then goes
 * on reading the whole table at every call while the table grows (the plan cache test shows a lookup by id
 * reading 20,000 rows). So `prepared` is for statements with no plan of their own to choose: inserts (a
 * conflict is found through the unique index they name) and a function's call (the functions that read
 * tables plan their statements at every call, or run with sequential scans off: migrations 0012 and 0013).
 * Lookups, updates and deletes are prepared with `plannedPerCall`, which keeps PostgreSQL off a generic plan
 * that scans a table. Two lookups keep a generic plan on purpose: the API key's admission and its lookup by
 * secret hash (`api_keys` holds keys, not documents or calls; see key-admission.ts). The plan cache test checks
 * every statement a request or a delivery runs by name, on tables analyzed empty, at 1, 60 or 3,000 rows, or
 * never, then grown.
 */
export interface Prepared {
  readonly name: string;
  readonly text: string;
  /** Values sent after the caller's: the marker's of `plannedPerCall`. */
  readonly trailing?: readonly unknown[];
}

/** Names must be unique per text: one name, one statement, for the life of the process. */
const preparedNames = new Map<string, string>();

/** The statements prepared so far (every one the modules loaded define), by name: for the plan cache test. */
export const preparedStatements = (): ReadonlyMap<string, string> => new Map(preparedNames);

const register = (name: string, text: string): string => {
  const full = `esig_${name}`;
  const known = preparedNames.get(full);
  if (known !== undefined && known !== text) throw new Error(`prepared statement ${full} is defined twice with different texts`);
  preparedNames.set(full, text);
  return full;
};

/** A named statement that keeps a generic plan (see `Prepared`): an insert, a function's call. `name` is unique among them. */
export const prepared = (name: string, text: string): Prepared => ({ name: register(name, text), text });

/**
 * A named statement, parsed once per connection, that PostgreSQL plans for each call's values rather than run
 * a generic plan that scans a table (see `Prepared`). `text` gets the condition to add to a WHERE, usually its
 * outer query's (see `changeOnePlannedPerCall` and `CLEAR_FAILURES` for the other places):
 * `esig_planned_per_call($n)`, with a parameter after the caller's `params` that is always 1.
 * Planned for a call's values, that condition is true and dropped; in a generic plan it stays, and on a scan
 * of a table (or a join, or a query with no FROM) its cost makes the plan 2,500 of the planner's units dearer
 * (a lookup by primary key costs 8), so PostgreSQL does not keep it (migration 0012 says how). PostgreSQL does
 * not count that cost on an index scan: a generic plan that is one may still be kept, which for these
 * statements is usually their key's index, but may be another index that holds the key as a later column, walked
 * whole, when the plan was made while the table was small. It costs a planning a microsecond or two. (On a query
 * with no FROM, such as the outer query of `expectRows`, its cost counts on every generic plan: a statement with
 * the condition there is planned at every call.)
 */
export const plannedPerCall = (name: string, params: number, text: (marker: string) => string): Prepared => {
  const full = text(`esig_planned_per_call($${params + 1}::integer)`);
  return { name: register(name, full), text: full, trailing: PER_CALL };
};
const PER_CALL: readonly unknown[] = Object.freeze([1]);

/** The values a statement is sent with: the caller's, and its own trailing ones. */
export const valuesOf = (stmt: string | Prepared, values: readonly unknown[]): unknown[] =>
  typeof stmt === 'string' || stmt.trailing === undefined ? [...values] : [...values, ...stmt.trailing];

/** The driver's query config for a plain or a prepared statement. */
export const queryConfig = (stmt: string | Prepared, values: readonly unknown[]): pg.QueryConfig =>
  typeof stmt === 'string' ? { text: stmt, values: [...values] } : { name: stmt.name, text: stmt.text, values: valuesOf(stmt, values) };

/** A place to run statements: the pool (each statement its own transaction) or one transaction's client. */
export interface Conn {
  /**
   * Runs one statement. `access` says whether it only reads: a transaction may send its first read together
   * with its `BEGIN` (see the unit of work), never a write.
   */
  query(stmt: string | Prepared, values: readonly unknown[], access: Access): Promise<pg.QueryResult>;
  /** Why a statement of this kind must not run on this handle now, or `null` when it may. */
  unusable(access: Access): Error | null;
  /**
   * Sends a write without waiting for its answer, where the handle can (a transaction run with `deferWrites`,
   * values the driver cannot fail to encode), and says whether it did. The write must fail, if it fails, with
   * an error from PostgreSQL (see `write`'s `raising`), which `toStoreError` turns into a StoreError with
   * `onConflict`; the transaction then fails with it and commits nothing. The pool cannot: each of its
   * statements commits on its own, so it answers `false` and the caller runs the write as usual.
   */
  deferWrite?(stmt: string | Prepared, values: readonly unknown[], onConflict?: OnConflict): boolean;
  /**
   * True for the pool, where statements run side by side, each on its own: lookups made in one turn of the
   * event loop may then share one statement (`turnBatcher`). A transaction's client runs its statements one
   * at a time, in order, and each waits for the one before it: there a lookup is one statement of its own.
   */
  readonly batchesReads?: boolean;
}

/**
 * What a lost race (see LOST_RACE) is about, given its SQLSTATE: a taken key (23505), a write that changed too
 * few rows (EW001), or a lock not had (55P03, 40P01, 40001). Most name their row whatever the cause.
 */
export type OnConflict = (sqlState: string) => StoreError;

/** What a write's answer means: `null` when it did what it should, else the error the write fails with. */
export type WriteCheck = (result: pg.QueryResult) => StoreError | null;

/**
 * A statement that failed because a write before it in the same transaction had (PostgreSQL refuses every
 * statement after a failed one until the transaction ends): it fails with that write's own error, as it would
 * have had the write been waited for.
 */
export class EarlierWriteFailed extends Error {
  constructor(readonly storeError: StoreError) {
    super('an earlier write in this transaction failed');
  }
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
 * a serialization failure, a deadlock the server broke by aborting this side, a lock not obtained
 * within `lock_timeout`, and a write that did not change the rows it should have (`esig_expect_rows`,
 * migration 0009: a stale version, a row another transaction took). The caller may retry the whole
 * command, which is what ConcurrentModification says.
 */
const LOST_RACE = new Set(['23505', '40001', '40P01', '55P03', 'EW001']);

/** True for a driver error that means a lost race (see LOST_RACE), not a fault. */
export const isLostRace = (e: unknown): boolean => {
  const code = sqlState(e);
  return code !== undefined && LOST_RACE.has(code);
};

/** Turns a thrown driver error into a StoreError; a lost race becomes `onConflict(its SQLSTATE)` when given. */
export const toStoreError = (e: unknown, onConflict?: OnConflict): StoreError => {
  if (!isLostRace(e)) return storeFailure(e);
  if (onConflict !== undefined) return onConflict(sqlState(e)!);
  const err = e as { table?: unknown; constraint?: unknown; code?: unknown };
  return concurrentModification(typeof err.table === 'string' ? err.table : 'row', typeof err.constraint === 'string' ? err.constraint : String(err.code));
};

/**
 * The driver edge: runs one statement when the task runs (not when it is built) and turns a thrown driver
 * error into a StoreError. `onConflict` names what a lost race is about, for the ConcurrentModification.
 */
export const run =
  (conn: Conn, access: Access, text: string | Prepared, values: readonly unknown[], onConflict?: OnConflict): StoreResult<pg.QueryResult> =>
  async () => {
    const blocked = conn.unusable(access);
    if (blocked !== null) return E.left(storeFailure(blocked));
    try {
      return E.right(await conn.query(text, values, access));
    } catch (e) {
      return E.left(failureOf(e, onConflict));
    }
  };

/** The StoreError a statement failed with: an earlier write's own (see EarlierWriteFailed), or its driver error's. */
const failureOf = (e: unknown, onConflict?: OnConflict): StoreError => (e instanceof EarlierWriteFailed ? e.storeError : toStoreError(e, onConflict));

/**
 * A write whose answer the caller needs only as success or failure (`outcome` says which). In a transaction
 * run with `deferWrites` it is sent as `raising`, without waiting for its answer (see `Conn.deferWrite`): what
 * follows, the next statement or the `COMMIT`, goes out behind it at once instead of a round trip later, and
 * its failure fails the transaction. Anywhere else it runs as `text`, and its failure is known at once.
 *
 * `raising` is the same write made to fail with an error from PostgreSQL (which then refuses the rest of the
 * transaction, and rolls it back at the `COMMIT`) wherever `outcome` would fail it: an insert without
 * `ON CONFLICT DO NOTHING`, an update checked by `esig_expect_rows` (see `expectRows`). It takes the same
 * values. (`text` keeps such a failure from aborting the transaction, for work that tolerates it.) Without
 * `raising`, the write is always waited for. Most writes need no more than `writeOne` (with `insertOne` or
 * `changeOne`, which make both forms from one text) or `writeAny`.
 */
export const write =
  (
    conn: Conn,
    text: string | Prepared,
    values: readonly unknown[],
    outcome: WriteCheck,
    onConflict?: OnConflict,
    raising?: string | Prepared,
  ): StoreResult<void> =>
  async () => {
    const blocked = conn.unusable('write');
    if (blocked !== null) return E.left(storeFailure(blocked));
    if (raising !== undefined && conn.deferWrite?.(raising, values, onConflict) === true) return E.right(undefined);
    try {
      const failed = outcome(await conn.query(text, values, 'write'));
      return failed === null ? E.right(undefined) : E.left(failed);
    } catch (e) {
      return E.left(failureOf(e, onConflict));
    }
  };

/** The check of a write that must change exactly one row, and otherwise fails with `otherwise()`. */
const oneRow =
  (otherwise: () => StoreError): WriteCheck =>
  (r) =>
    r.rowCount === 1 ? null : otherwise();

/** The check of a write that may change any number of rows. */
export const anyRows: WriteCheck = () => null;

/**
 * An update or a delete (`UPDATE … WHERE …`, `DELETE … WHERE …`, without `RETURNING`) that fails with EW001,
 * read as a lost race, unless it changes exactly `expected` rows (a number, or a parameter such as `$5`): the
 * `raising` form of a `write`. `marker`: the condition of `plannedPerCall`, on the outer query, which has no FROM:
 * there its cost counts on every generic plan, so the statement is planned at every call (see `changeOnePlannedPerCall`).
 */
export const expectRows = (update: string, expected: number | string, marker?: string): string =>
  `WITH changed AS (${update} RETURNING 1) SELECT esig_expect_rows((SELECT count(*) FROM changed), ${expected})${marker === undefined ? '' : ` WHERE ${marker}`}`;

/**
 * A write that must change exactly one row, in its two forms (see `write`): `text` misses by changing no row,
 * `raising` by an error of PostgreSQL's. Made by `insertOne` or `changeOne`, so the forms cannot drift apart;
 * run by `writeOne`.
 */
export interface OneRowWrite {
  readonly text: string | Prepared;
  readonly raising: string | Prepared;
}

/** `text` as it is, or prepared under `name` (see `prepared`). */
const maybePrepared = (name: string | undefined, text: string): string | Prepared => (name === undefined ? text : prepared(name, text));

/**
 * An insert of one row (`INSERT … VALUES …`, no `ON CONFLICT`) whose key may be taken. Waited for, it inserts
 * nothing then (`ON CONFLICT DO NOTHING`); sent unanswered, it raises a unique violation. With `name`, both forms
 * are prepared (the raising one as `<name>_raising`).
 */
export const insertOne = (insert: string, name?: string): OneRowWrite => ({
  text: maybePrepared(name, `${insert} ON CONFLICT DO NOTHING`),
  raising: maybePrepared(name === undefined ? undefined : `${name}_raising`, insert),
});

/**
 * An update or a delete that must change exactly one row (a version check, a lease): waited for, it changes
 * none on a miss; sent unanswered, `esig_expect_rows` raises EW001 (see `expectRows`). With `name`, both forms
 * are prepared.
 */
export const changeOne = (change: string, name?: string): OneRowWrite => ({
  text: maybePrepared(name, change),
  raising: maybePrepared(name === undefined ? undefined : `${name}_raising`, expectRows(change, 1)),
});

/**
 * `changeOne` for a change kept off generic plans that scan (see `plannedPerCall`): `change` gets the condition to
 * add to its WHERE.
 *
 * The raising form carries the marker on `expectRows`' outer query too, which has no FROM: its cost counts on every
 * generic plan there, so that form is planned at every call. With the marker in the change's WHERE alone,
 * PostgreSQL kept generic plans made while the table was small that walk a whole index of which `id` is not the
 * first column (an attacker's review, of an attach of one document by id and of a job's completion: 1,836 pages
 * for one document among 100,000, 192 for one job among 20,000).
 * `keyIndexOnly`: declares that no index of the table but its primary key holds any column the change's WHERE
 * names, so a plan that uses an index uses the key's: the raising form then keeps its marker in the change's WHERE
 * only, and keeps a generic plan, as the answered form does. (The plan cache test checks the claim against the
 * table's indexes.)
 */
export const changeOnePlannedPerCall = (
  name: string,
  params: number,
  change: (marker: string) => string,
  { keyIndexOnly = false }: { readonly keyIndexOnly?: boolean } = {},
): OneRowWrite => ({
  text: plannedPerCall(name, params, change),
  raising: plannedPerCall(`${name}_raising`, params, (marker) => expectRows(change(marker), 1, keyIndexOnly ? undefined : marker)),
});

/**
 * Runs `stmt` (see `write`): it fails with `miss()` unless it changed exactly one row, and a lost race with
 * `onConflict` (by default `miss` too).
 */
export const writeOne = (conn: Conn, stmt: OneRowWrite, values: readonly unknown[], miss: () => StoreError, onConflict: OnConflict = miss): StoreResult<void> =>
  write(conn, stmt.text, values, oneRow(miss), onConflict, stmt.raising);

/**
 * Runs a write that may change any number of rows, and fails only with an error of PostgreSQL's: it is its own
 * raising form, so it can always be sent unanswered (see `write`).
 */
export const writeAny = (conn: Conn, stmt: string | Prepared, values: readonly unknown[]): StoreResult<void> => write(conn, stmt, values, anyRows, undefined, stmt);

/** A pg identifier in double quotes (channel names for LISTEN). */
export const quoteIdent = (name: string): string => `"${name.replace(/"/g, '""')}"`;
