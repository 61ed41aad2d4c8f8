import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { IdempotencyStateC, StoredResponseC, idempotencyRow, toIdempotencyRecord } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { changeOnePlannedPerCall, insertOne, plannedPerCall, prepared, run, writeOne } from './connection.js';
import { BatchLimit, ModeC, Timestamp, TimestampColumn, columnCodecs, decode, nullable, rowType } from './decode.js';

const IdempotencyRow = idempotencyRow(columnCodecs);

const NewRecord = rowType({
  tenant: rowType({ orgId: t.string, mode: ModeC }),
  key: t.string,
  fingerprint: t.string,
  state: IdempotencyStateC,
  response: nullable(StoredResponseC),
  createdAt: Timestamp,
  lockedUntil: Timestamp,
  expiresAt: Timestamp,
});

const COLUMNS = 'org_id, mode, key, fingerprint, state, response, created_at, locked_until, expires_at';
const VALUES = '$1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9';

// Each reaches one record by the primary key (org_id, mode, key): the lookup and the completion are kept off
// generic plans that scan, the inserts keep one plan (see `plannedPerCall` in connection.ts).
export const FIND = plannedPerCall('idempotency_find', 3, (m) => `SELECT ${COLUMNS} FROM idempotency_keys WHERE org_id = $1 AND mode = $2 AND key = $3 AND ${m}`);
const INSERT_IF_ABSENT = prepared('idempotency_insert', `INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (org_id, mode, key) DO NOTHING`);
/** A record for a key that has none: waited for, it inserts nothing on a taken key; sent unanswered, it raises (23505). */
const INSERT_NEW = insertOne(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES})`, 'idempotency_insert_new');
const REPLACE = prepared(
  'idempotency_replace',
  `INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES})
   ON CONFLICT (org_id, mode, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state,
     response = excluded.response, created_at = excluded.created_at, locked_until = excluded.locked_until,
     expires_at = excluded.expires_at
   WHERE idempotency_keys.fingerprint = $10 AND idempotency_keys.state = $11 AND idempotency_keys.created_at = $12
     AND idempotency_keys.locked_until = $13 AND idempotency_keys.expires_at = $14`,
);
/** The record is still the caller's claim (`IdempotencyStore.complete`), its fingerprint and lock the given parameters. */
const HOLDS_CLAIM = (fingerprint: string, lockedUntil: string) => `state = 'in_progress' AND fingerprint = ${fingerprint} AND locked_until = ${lockedUntil}`;

// Its WHERE names the primary key's columns, which no other index holds (the expiry index is on expires_at alone):
// both forms keep a generic plan, which is the key's lookup. Planned at every call, the raising form, sent by
// every command with an Idempotency-Key, cost a backend about 70 µs of planning. The rest of the WHERE is the
// caller's claim (`IdempotencyStore.complete`), checked on the row the key finds.
export const COMPLETE = changeOnePlannedPerCall(
  'idempotency_complete_claim',
  6,
  (m) =>
    `UPDATE idempotency_keys SET state = 'completed', response = $1::jsonb
     WHERE org_id = $2 AND mode = $3 AND key = $4 AND ${HOLDS_CLAIM('$5', '$6')} AND ${m}`,
  { keyIndexOnly: true },
);

/** The statement parameters for a record, after checking it with the codec that reads it back. */
const toParams = (rec: IdempotencyRecord) =>
  pipe(
    decode(NewRecord, `new idempotency_keys row ${rec.key}`)(rec),
    E.map(() => [
      rec.tenant.orgId,
      rec.tenant.mode,
      rec.key,
      rec.fingerprint,
      rec.state,
      rec.response === null ? null : JSON.stringify(rec.response),
      rec.createdAt,
      rec.lockedUntil,
      rec.expiresAt,
    ]),
  );

/**
 * One batch of expired records, with `expires_at` from $3 (`-infinity`: from the first) to $1. The batch is
 * found in the expiry index and deleted by its rows' addresses (ctid), so a batch costs its own size whatever
 * the backlog: joined back by primary key instead, the planner hashed the batch and read the whole expired
 * range of the index to match it, every batch. A row replaced meanwhile (a later expiry) has moved to another
 * address, and is checked against `expires_at` again: it stays. `through` is only where the next batch
 * starts (inclusive), so a row written by hand finer than a millisecond, or at -infinity, must not fail the
 * batch it was deleted in: it is rounded down, or left out.
 */
export const PURGE_EXPIRED_SQL = `WITH deleted AS (
    DELETE FROM idempotency_keys
    WHERE ctid = ANY (ARRAY(SELECT ctid FROM idempotency_keys WHERE expires_at >= $3 AND expires_at <= $1 ORDER BY expires_at LIMIT $2))
      AND expires_at <= $1
    RETURNING expires_at)
  SELECT count(*)::int AS deleted,
         CASE WHEN isfinite(max(expires_at)) THEN date_trunc('milliseconds', max(expires_at)) END AS through
  FROM deleted`;

const PurgedRow = rowType({ deleted: t.number, through: nullable(TimestampColumn) });

/**
 * The IdempotencyStore. `insertIfAbsent` is a single `INSERT … ON CONFLICT DO NOTHING`, so two callers
 * racing for the same key get exactly one `true`, and the loser's transaction stays usable (a failed
 * statement would abort it).
 */
export const pgIdempotency = (conn: Conn): IdempotencyStore => ({
  find: (tenant, key) =>
    pipe(
      run(conn, 'read', FIND, [tenant.orgId, tenant.mode, key]),
      TE.chainEitherK(({ rows: [row] }) =>
        row === undefined ? E.right(null) : pipe(decode(IdempotencyRow, `idempotency_keys row ${key}`)(row), E.map(toIdempotencyRecord)),
      ),
    ),

  insertIfAbsent: (record) =>
    pipe(
      TE.fromEither(toParams(record)),
      TE.chain((params) => run(conn, 'write', INSERT_IF_ABSENT, params)),
      TE.map((r) => r.rowCount === 1),
    ),

  insertNew: (record) =>
    pipe(
      TE.fromEither(toParams(record)),
      TE.chain((params) => {
        const taken = () => concurrentModification('idempotency_key', record.key);
        // Only a unique violation says the key is taken; a lock on it not had in time is a lost race of another kind,
        // which the caller's way for a taken key would only wait for again.
        return writeOne(conn, INSERT_NEW, params, taken, (code) => (code === '23505' ? taken() : concurrentModification('row', code)));
      }),
    ),

  // An upsert, but only over the record the caller read (`previous`): an absent one (purged meanwhile) must not
  // make the take-over fail, and a changed one means another caller decided on it first. A concurrent caller
  // replacing the same record waits on its row, then finds it changed (the condition is checked against the row
  // as the first one committed it) and changes nothing.
  replace: (record, previous) =>
    pipe(
      TE.fromEither(toParams(record)),
      TE.chain((params) =>
        run(conn, 'write', REPLACE, [...params, previous.fingerprint, previous.state, previous.createdAt, previous.lockedUntil, previous.expiresAt]),
      ),
      TE.map((r) => r.rowCount === 1),
    ),

  complete: (tenant, key, response: StoredResponse, claim) => {
    const gone = () => concurrentModification('idempotency_key', key);
    return pipe(
      TE.fromEither(decode(StoredResponseC, `idempotency response for ${key}`)(response)),
      TE.chain(() =>
        // No record of this claim means it was purged or released while the operation ran, or taken over by another
        // caller once its lock ran out: committing the operation would let the command run twice (a retry, or that
        // other caller), so the transaction must fail.
        writeOne(conn, COMPLETE, [JSON.stringify(response), tenant.orgId, tenant.mode, key, claim.fingerprint, claim.lockedUntil], gone),
      ),
    );
  },

  release: (tenant, key, claim) =>
    pipe(
      run(
        conn,
        'write',
        `DELETE FROM idempotency_keys WHERE org_id = $1 AND mode = $2 AND key = $3 AND ${HOLDS_CLAIM('$4', '$5')}`,
        [tenant.orgId, tenant.mode, key, claim.fingerprint, claim.lockedUntil],
      ),
      TE.map(() => undefined),
    ),

  purgeExpired: (now, limit, from = null) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'purge time')(now)),
      TE.chainFirstEitherK(() => decode(BatchLimit, 'purge limit')(limit)),
      TE.chainFirstEitherK(() => (from === null ? E.right(null) : decode(Timestamp, 'purge start')(from))),
      TE.chain(() => run(conn, 'write', PURGE_EXPIRED_SQL, [now, limit, from ?? '-infinity'])),
      TE.chainEitherK((r) => decode(PurgedRow, 'purged batch')(r.rows[0])),
    ),
});
