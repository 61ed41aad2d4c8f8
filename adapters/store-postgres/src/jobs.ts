import type { Job, JobQueue } from '@esig/core';
import { concurrentModification, storeFailure } from '@esig/core';
import { JobKindC, JobPayloadC, JobWorkC, dedupeKeyBounds, jobRow, queuedJobRow, storedPayload, toJob, toQueuedJob } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { changeOnePlannedPerCall, prepared, run, writeAny, writeOne } from './connection.js';
import { ModeC, Timestamp, TimestampColumn, columnCodecs, decode, decodeAll, nullable, rowDecoder, rowType } from './decode.js';

/** The channel `enqueue` notifies (with the job's kind as payload) when its job commits: a worker wake-up. */
export const JOBS_CHANNEL = 'esig_jobs';

const JobRow = jobRow(columnCodecs);

const NewJobC = rowType({
  id: t.string,
  kind: JobKindC,
  orgId: t.string,
  mode: ModeC,
  payload: JobPayloadC,
  runAt: Timestamp,
  dedupeKey: nullable(t.string),
  createdAt: Timestamp,
});

const COLUMNS = 'id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, last_error';

const decodeRow = rowDecoder(JobRow, 'jobs', toJob);
const decodeQueuedRow = rowDecoder(queuedJobRow(columnCodecs), 'jobs', toQueuedJob);

const Kinds = t.readonlyArray(JobKindC);
const checkTimes = (what: string, ...times: string[]) => E.traverseArray(decode(Timestamp, what))(times);

/**
 * Hands out due jobs: `esig_jobs_claim` (migration 0008) leases up to $5 claimable jobs of the kinds $1,
 * oldest run_at first, reading each kind's own range of `jobs_due` and skipping rows another claimer has
 * locked at this moment (so concurrent claimers neither wait for nor share a job). Parameters: kinds
 * (distinct), now, worker, lease end, limit. The function holds the statement for its planner settings.
 */
export const CLAIM_SQL = `SELECT ${COLUMNS} FROM esig_jobs_claim($1::text[], $2::timestamptz, $3::text, $4::timestamptz, $5::integer)`;

/**
 * The soonest time a job of the kinds $1 can be claimed, a leased job counting at its lease end, from
 * `esig_jobs_next_run_at` (migration 0008): each kind's first unleased job and its leased ones, never the
 * jobs that wait behind them.
 */
export const NEXT_RUN_AT_SQL = 'SELECT esig_jobs_next_run_at($1::text[]) AS next';

const byRunAt = (a: Job, b: Job) => (a.runAt < b.runAt ? -1 : a.runAt > b.runAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** A job done: gone, while `worker` ($2) still holds its lease. */
// `dead IS NOT TRUE` (for this NOT NULL column, `NOT dead`) implies neither partial index's `WHERE NOT dead`, so the
// id is found by the primary key alone: a generic plan made on a table never analyzed walked the whole `jobs_due`
// index, which holds the id as its last column (the plan cache test counts pages).
export const COMPLETE = changeOnePlannedPerCall('jobs_complete', 2, (m) => `DELETE FROM jobs WHERE id = $1 AND locked_by = $2 AND dead IS NOT TRUE AND ${m}`);
// Function calls, prepared (see `Prepared`): the statements inside are planned by the functions.
const CLAIM = prepared('jobs_claim', CLAIM_SQL);
/** A tenant's waiting jobs of a dedupe-key prefix (see `JobQueue.cancelWaiting`), as the range `$1 <= key < $2`. */
export const CANCEL_WAITING = 'DELETE FROM jobs WHERE dedupe_key >= $1 AND dedupe_key < $2 AND org_id = $3 AND mode = $4 AND locked_by IS NULL AND NOT dead';
/** The same for one dedupe key. */
const CANCEL_WAITING_KEY = 'DELETE FROM jobs WHERE dedupe_key = $1 AND org_id = $2 AND mode = $3 AND locked_by IS NULL AND NOT dead';
const NEXT_RUN_AT = prepared('jobs_next_run_at', NEXT_RUN_AT_SQL);

/**
 * The JobQueue. A lease is (locked_by, locked_until); a job whose locked_until is at or before `now` is free
 * to claim again. Completing, retrying and burying act only while `worker` still holds the lease, so a
 * worker that lost its job (lease expired, another claimed it) cannot disturb the new holder.
 */
export const pgJobs = (conn: Conn): JobQueue => ({
  enqueue: (job) =>
    pipe(
      TE.fromEither(decode(NewJobC, `new jobs row ${job.id}`)({ ...job, payload: storedPayload(job) })),
      // Its payload must read back as its kind's: whatever is written can be read.
      TE.chainFirst(() => TE.fromEither(decode(JobWorkC, `new jobs row ${job.id}`)(job))),
      TE.chain(() =>
        run(
          conn,
          'write',
          // A taken dedupe key is the expected "already enqueued": DO NOTHING keeps the transaction usable.
          // pg_notify is transactional: listeners hear of the job when it commits, never before.
          `WITH inserted AS (
             INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, dedupe_key, created_at)
             VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8)
             ON CONFLICT (dedupe_key) DO NOTHING
             RETURNING kind
           )
           SELECT pg_notify('${JOBS_CHANNEL}', kind) FROM inserted`,
          [job.id, job.kind, job.orgId, job.mode, JSON.stringify(storedPayload(job)), job.runAt, job.dedupeKey, job.createdAt],
          // Only a reused job id gets here (a bug in the caller's id generation).
          () => concurrentModification('job', job.id),
        ),
      ),
      TE.map((r) => r.rowCount === 1),
    ),

  claim: (kinds, worker, now, leaseUntil, limit) => {
    if (!Number.isSafeInteger(limit)) return TE.left(storeFailure(new RangeError(`claim limit must be an integer, got ${limit}`)));
    if (kinds.length === 0 || limit < 1) return TE.right([]);
    return pipe(
      TE.fromEither(pipe(decode(Kinds, 'job kinds')(kinds), E.chain(() => checkTimes('claim time', now, leaseUntil)))),
      // Each kind once: a kind twice would read its range twice and count its jobs twice against the limit.
      TE.chain(() => run(conn, 'write', CLAIM, [[...new Set(kinds)], now, worker, leaseUntil, limit])),
      // RETURNING comes in no particular order; the port promises oldest runAt first.
      TE.chainEitherK((r) => decodeAll(decodeRow)(r.rows)),
      TE.map((jobs) => [...jobs].sort(byRunAt)),
    );
  },

  complete: (id, worker) => {
    const lost = () => concurrentModification('job', id);
    // Only a row-count miss (EW001) is a lease not held. A lock on the job's row waited for too long (55P03) or a
    // deadlock (40P01) is a race like any other, about the row: the job is retried, not given up as lost while
    // this worker still holds it.
    const raced = (code: string) => (code === 'EW001' ? lost() : concurrentModification('row', code));
    return writeOne(conn, COMPLETE, [id, worker], lost, raced);
  },

  extendLease: (id, worker, leaseUntil) =>
    pipe(
      TE.fromEither(checkTimes('lease end', leaseUntil)),
      TE.chain(() => run(conn, 'write', 'UPDATE jobs SET locked_until = $3 WHERE id = $1 AND locked_by = $2 AND NOT dead', [id, worker, leaseUntil])),
      TE.map((r) => r.rowCount === 1),
    ),

  // jsonb || merges the notes' keys into the payload object, a note replacing the same key.
  annotate: (id, notes) =>
    pipe(
      TE.fromEither(decode(JobPayloadC, `notes for job ${id}`)(notes)),
      TE.chain(() => run(conn, 'write', 'UPDATE jobs SET payload = payload || $2::jsonb WHERE id = $1', [id, JSON.stringify(notes)])),
      TE.map((r) => r.rowCount === 1),
    ),

  // Without the lease nothing happens: the job belongs to whoever holds it now.
  retry: (id, worker, runAt, error) =>
    pipe(
      TE.fromEither(checkTimes('retry time', runAt)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = $3, last_error = $4
           WHERE id = $1 AND locked_by = $2 AND NOT dead`,
          [id, worker, runAt, error],
        ),
      ),
      TE.map(() => undefined),
    ),

  bury: (id, worker, error) =>
    pipe(
      run(
        conn,
        'write',
        `UPDATE jobs SET dead = true, locked_by = NULL, locked_until = NULL, last_error = $3
         WHERE id = $1 AND locked_by = $2 AND NOT dead`,
        [id, worker, error],
      ),
      TE.map(() => undefined),
    ),

  // A leased job becomes claimable when its lease ends, not at its (past) run_at: a worker that sleeps
  // until this time wakes when a dead worker's job can be taken over.
  nextRunAt: (kinds) => {
    if (kinds.length === 0) return TE.right(null);
    return pipe(
      TE.fromEither(decode(Kinds, 'job kinds')(kinds)),
      TE.chain(() => run(conn, 'read', NEXT_RUN_AT, [[...kinds]])),
      TE.chainEitherK(({ rows: [row] }) => decode(rowType({ next: nullable(TimestampColumn) }), 'next job time')(row)),
      TE.map((r) => r.next),
    );
  },

  list: (filter) => {
    if (!Number.isSafeInteger(filter.limit) || filter.limit < 1)
      return TE.left(storeFailure(new RangeError(`list limit must be a positive integer, got ${filter.limit}`)));
    return pipe(
      TE.fromEither(decode(Kinds, 'job kinds')(filter.kinds ?? [])),
      TE.chain((kinds) =>
        run(
          conn,
          'read',
          // Absent conditions are NULL parameters that let every row through, so one statement serves every filter.
          `SELECT ${COLUMNS}, dead, locked_by, locked_until FROM jobs
           WHERE (cardinality($1::text[]) = 0 OR kind = ANY($1::text[]))
             AND (NOT $2::boolean OR last_error IS NOT NULL)
             AND ($3::text IS NULL OR payload->>'requestId' = $3::text)
             AND ($5::text[] IS NULL OR id = ANY($5::text[]))
           ORDER BY run_at, id
           LIMIT $4`,
          [[...kinds], filter.failedOnly === true, filter.requestId ?? null, filter.limit, filter.ids === undefined ? null : [...filter.ids]],
        ),
      ),
      TE.chainEitherK((r) => decodeAll(decodeQueuedRow)(r.rows)),
    );
  },

  // Planned for each call's values (plain text, no generic plan): the dedupe key's unique index, a key or a range of it.
  cancelWaiting: (tenant, match) =>
    pipe(
      TE.fromEither(dedupeKeyBounds(match)),
      TE.chain((keys) =>
        'key' in keys
          ? writeAny(conn, CANCEL_WAITING_KEY, [keys.key, tenant.orgId, tenant.mode])
          : writeAny(conn, CANCEL_WAITING, [keys.from, keys.to, tenant.orgId, tenant.mode]),
      ),
    ),

  // Notifies like enqueue: to idle workers a revived job is new work.
  revive: (id, now) =>
    pipe(
      TE.fromEither(checkTimes('revive time', now)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `WITH revived AS (
             UPDATE jobs SET dead = false, attempts = 0, run_at = $2, locked_by = NULL, locked_until = NULL
             WHERE id = $1 AND last_error IS NOT NULL AND (locked_until IS NULL OR locked_until <= $2::timestamptz)
             RETURNING kind
           )
           SELECT pg_notify('${JOBS_CHANNEL}', kind) FROM revived`,
          [id, now],
        ),
      ),
      TE.map((r) => r.rowCount === 1),
    ),
});
