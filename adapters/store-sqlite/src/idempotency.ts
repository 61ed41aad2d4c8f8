import type { IdempotencyRecord, IdempotencyStore, StoredResponse } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { StoredResponseC, idempotencyRow, toIdempotencyRecord } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { BatchLimit, Timestamp, columnCodecs, decode } from './decode.js';
import { limitParam } from './sql-text.js';

const IdempotencyRow = idempotencyRow(columnCodecs);

const COLUMNS = 'org_id, mode, key, fingerprint, state, response, created_at, locked_until, expires_at';
const VALUES = '@org_id, @mode, @key, @fingerprint, @state, @response, @created_at, @locked_until, @expires_at';

/** The row for a record, checked with the codec that reads it back. */
const toRow = (rec: IdempotencyRecord) => {
  const row = {
    org_id: rec.tenant.orgId,
    mode: rec.tenant.mode,
    key: rec.key,
    fingerprint: rec.fingerprint,
    state: rec.state,
    response: rec.response === null ? null : JSON.stringify(rec.response),
    created_at: rec.createdAt,
    locked_until: rec.lockedUntil,
    expires_at: rec.expiresAt,
  };
  return pipe(
    decode(IdempotencyRow, `new idempotency_keys row ${rec.key}`)(row),
    E.map(() => row),
  );
};

const changedRows = (r: { readonly changes: number }) => r.changes;

/**
 * One batch of expired records (`expires_at` from ? to ?): found in the expiry index, deleted by rowid, so a
 * batch costs its own size. Timestamps are ISO text, so `''` stands for "from the first".
 */
export const PURGE_EXPIRED_SQL = `DELETE FROM idempotency_keys WHERE expires_at <= @now AND rowid IN
  (SELECT rowid FROM idempotency_keys WHERE expires_at >= @from AND expires_at <= @now ORDER BY expires_at ${limitParam('@limit')})
  RETURNING expires_at`;

/** The record is still the caller's claim (`IdempotencyStore.complete`): its fingerprint and lock, the last two parameters. */
const HOLDS_CLAIM = "state = 'in_progress' AND fingerprint = ? AND locked_until = ?";

/**
 * The IdempotencyStore. `insertIfAbsent` is a single `INSERT … ON CONFLICT DO NOTHING`, so two callers
 * racing for the same key get exactly one `true` even without a surrounding transaction.
 */
export const sqliteIdempotency = (conn: Conn): IdempotencyStore => ({
  find: (tenant, key) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM idempotency_keys WHERE org_id = ? AND mode = ? AND key = ?`).get(tenant.orgId, tenant.mode, key)),
      TE.chainEitherK((row) =>
        row === undefined ? E.right(null) : pipe(decode(IdempotencyRow, `idempotency_keys row ${key}`)(row), E.map(toIdempotencyRecord)),
      ),
    ),

  insertIfAbsent: (record) =>
    pipe(
      TE.fromEither(toRow(record)),
      TE.chain((row) =>
        attempt(conn, (c) => c.prepare(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES}) ON CONFLICT (org_id, mode, key) DO NOTHING`).run(row)),
      ),
      TE.map((r) => changedRows(r) === 1),
    ),

  insertNew: (record) =>
    pipe(
      TE.fromEither(toRow(record)),
      TE.chain((row) =>
        attempt(
          conn,
          (c) => c.prepare(`INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES})`).run(row),
          () => concurrentModification('idempotency_key', record.key),
        ),
      ),
      TE.map(() => undefined),
    ),

  // An upsert, but only over the record the caller read (`previous`): an absent one (purged meanwhile) must not
  // make the take-over fail, and a changed one means another caller decided on it first.
  replace: (record, previous) =>
    pipe(
      TE.fromEither(toRow(record)),
      TE.chain((row) =>
        attempt(conn, (c) =>
          c
            .prepare(
              `INSERT INTO idempotency_keys (${COLUMNS}) VALUES (${VALUES})
               ON CONFLICT (org_id, mode, key) DO UPDATE SET fingerprint = excluded.fingerprint, state = excluded.state,
                 response = excluded.response, created_at = excluded.created_at, locked_until = excluded.locked_until,
                 expires_at = excluded.expires_at
               WHERE idempotency_keys.fingerprint = @prev_fingerprint AND idempotency_keys.state = @prev_state
                 AND idempotency_keys.created_at = @prev_created_at AND idempotency_keys.locked_until = @prev_locked_until
                 AND idempotency_keys.expires_at = @prev_expires_at`,
            )
            .run({
              ...row,
              prev_fingerprint: previous.fingerprint,
              prev_state: previous.state,
              prev_created_at: previous.createdAt,
              prev_locked_until: previous.lockedUntil,
              prev_expires_at: previous.expiresAt,
            }),
        ),
      ),
      TE.map((r) => changedRows(r) === 1),
    ),

  // Both act on the record only while it is still the caller's claim (HOLDS_CLAIM: `IdempotencyStore.complete`).
  complete: (tenant, key, response: StoredResponse, claim) =>
    pipe(
      TE.fromEither(decode(StoredResponseC, `idempotency response for ${key}`)(response)),
      TE.chain(() =>
        attempt(conn, (c) =>
          c
            .prepare(`UPDATE idempotency_keys SET state = 'completed', response = ? WHERE org_id = ? AND mode = ? AND key = ? AND ${HOLDS_CLAIM}`)
            .run(JSON.stringify(response), tenant.orgId, tenant.mode, key, claim.fingerprint, claim.lockedUntil),
        ),
      ),
      // No record of this claim means it was purged or released while the operation ran, or taken over by another
      // caller once its lock ran out: committing the operation would let the command run twice, so the transaction
      // must fail.
      TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('idempotency_key', key)))),
    ),

  release: (tenant, key, claim) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare(`DELETE FROM idempotency_keys WHERE org_id = ? AND mode = ? AND key = ? AND ${HOLDS_CLAIM}`)
          .run(tenant.orgId, tenant.mode, key, claim.fingerprint, claim.lockedUntil),
      ),
      TE.map(() => undefined),
    ),

  purgeExpired: (now, limit, from = null) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'purge time')(now)),
      TE.chainFirstEitherK(() => decode(BatchLimit, 'purge limit')(limit)),
      TE.chainFirstEitherK(() => (from === null ? E.right(null) : decode(Timestamp, 'purge start')(from))),
      TE.chain(() => attempt(conn, (c) => c.prepare(PURGE_EXPIRED_SQL).pluck().all({ now, from: from ?? '', limit }) as string[])),
      TE.map((expiries) => ({ deleted: expiries.length, through: expiries.reduce<string | null>((a, b) => (a === null || b > a ? b : a), null) })),
    ),
});
