import type { Job, JobKind, JobQueue, NewJob } from '@esig/core';
import { concurrentModification, storeFailure } from '@esig/core';
import { JobKindC, dedupeKeyBounds, jobRow, queuedJobRow, storedPayload, toJob, toQueuedJob } from '@esig/store-sql';
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';
import { bySize, limitParam, placeholders } from './sql-text.js';

const JobRow = jobRow(columnCodecs);
const QueuedJobRow = queuedJobRow(columnCodecs);

const COLUMNS = 'id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, last_error';

/** A tenant's job (the next two parameters) that waits to run: no worker holds it, and it is not buried. */
const WAITING = 'org_id = ? AND mode = ? AND locked_by IS NULL AND dead = 0';

const toRow = (j: NewJob) => ({
  id: j.id,
  kind: j.kind,
  org_id: j.orgId,
  mode: j.mode,
  payload: JSON.stringify(storedPayload(j)),
  run_at: j.runAt,
  attempts: 0,
  dedupe_key: j.dedupeKey,
  created_at: j.createdAt,
  last_error: null,
});

const decodeRow = rowDecoder(JobRow, 'jobs', toJob);
const decodeQueuedRow = rowDecoder(QueuedJobRow, 'jobs', toQueuedJob);

const Notes = t.readonly(t.record(t.string, t.string));

const NextRow = rowType({ next: nullable(Timestamp) });

const byRunAt = (a: Job, b: Job) => (a.runAt < b.runAt ? -1 : a.runAt > b.runAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** The kinds, checked, and unique (the IN list's length decides which cached statement is used). */
const checkKinds = (kinds: readonly JobKind[]) =>
  pipe(
    [...new Set(kinds)],
    A.traverse(E.Applicative)(decode(JobKindC, 'job kind')),
  );

const changed = (r: { readonly changes: number }) => r.changes === 1;

/** The kinds as named parameters `@k0, @k1, …`, so that each arm of a statement below names its own. */
const kindValues = (kinds: readonly JobKind[]): Record<string, string> => Object.fromEntries(kinds.map((k, i) => [`k${i}`, k]));

/**
 * The claim for `n` kinds. Each arm reads one kind's range of `jobs_due`, oldest first, and stops after
 * `limit` claimable jobs; the oldest `limit` of all arms are leased. One walk of all live jobs in time order
 * would step over every due job of the other kinds first (a worker serves some kinds only).
 */
export const claimSql = bySize((n: number): string => {
  const arm = (i: number) =>
    `SELECT * FROM (SELECT id, run_at FROM jobs WHERE dead = 0 AND kind = @k${i} AND run_at <= @now AND (locked_until IS NULL OR locked_until <= @now)
     ORDER BY run_at, id ${limitParam('@limit')})`;
  return `UPDATE jobs SET locked_by = @worker, locked_until = @lease, attempts = attempts + 1
   WHERE id IN (SELECT id FROM (${Array.from({ length: n }, (_, i) => arm(i)).join(' UNION ALL ')}) ORDER BY run_at, id ${limitParam('@limit')})
   RETURNING ${COLUMNS}`;
});

/**
 * The soonest time a job of `n` kinds can be claimed. For each kind: its oldest unleased job (the first of its
 * range of `jobs_due`, past the few leased ones), and its leased jobs at their lease end (its range of
 * `jobs_leased`). An aggregate over all live jobs read every waiting job, and a worker with nothing to do asks
 * this each time.
 */
export const nextRunAtSql = bySize((n: number): string => {
  const waiting = (i: number) => `SELECT (SELECT run_at FROM jobs WHERE dead = 0 AND kind = @k${i} AND locked_until IS NULL ORDER BY run_at, id LIMIT 1) AS next`;
  const leased = (i: number) => `SELECT MIN(MAX(run_at, locked_until)) FROM jobs WHERE dead = 0 AND kind = @k${i} AND locked_until IS NOT NULL`;
  return `SELECT MIN(next) AS next FROM (
     ${Array.from({ length: n }, (_, i) => `${waiting(i)} UNION ALL ${leased(i)}`).join(' UNION ALL ')}
   )`;
});

/**
 * The JobQueue. Every method is one statement, so each is atomic on its own, inside a transaction or
 * not: in particular `claim` selects and leases in a single UPDATE, and SQLite has one writer at a time,
 * so two claimers (in this process or another) can never lease the same job.
 */
export const sqliteJobs = (conn: Conn): JobQueue => ({
  enqueue: (job) => {
    const row = toRow(job);
    return pipe(
      TE.fromEither(decode(JobRow, `new jobs row ${job.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO jobs (${COLUMNS}) VALUES (@id, @kind, @org_id, @mode, @payload, @run_at, @attempts, @dedupe_key, @created_at, @last_error)
                 ON CONFLICT (dedupe_key) DO NOTHING`,
              )
              .run(row),
          // A taken dedupe key is not a conflict (the insert does nothing); a taken id is.
          () => concurrentModification('job', job.id),
        ),
      ),
      TE.map(changed),
    );
  },

  claim: (kinds, worker, now, leaseUntil, limit) => {
    if (!Number.isSafeInteger(limit) || limit < 1)
      return TE.left(storeFailure(new RangeError(`claim limit must be a positive integer, got ${limit}`)));
    return pipe(
      TE.fromEither(
        pipe(
          E.Do,
          E.bind('kinds', () => checkKinds(kinds)),
          E.chainFirst(() => decode(Timestamp, 'claim time')(now)),
          E.chainFirst(() => decode(Timestamp, 'lease end')(leaseUntil)),
        ),
      ),
      TE.chain(({ kinds: unique }) =>
        unique.length === 0
          ? TE.right([])
          : attempt(conn, (c) => c.prepare(claimSql(unique.length)).all({ worker, lease: leaseUntil, now, limit, ...kindValues(unique) })),
      ),
      TE.chainEitherK(A.traverse(E.Applicative)(decodeRow)),
      // RETURNING hands rows back in no promised order.
      TE.map((jobs) => [...jobs].sort(byRunAt)),
    );
  },

  complete: (id, worker) =>
    pipe(
      attempt(conn, (c) => c.prepare('DELETE FROM jobs WHERE id = ? AND locked_by = ?').run(id, worker)),
      TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('job', id)))),
    ),

  extendLease: (id, worker, leaseUntil) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'lease end')(leaseUntil)),
      TE.chain(() =>
        attempt(conn, (c) => c.prepare('UPDATE jobs SET locked_until = ? WHERE id = ? AND locked_by = ? AND dead = 0').run(leaseUntil, id, worker)),
      ),
      TE.map(changed),
    ),

  // json_patch merges the notes' keys into the payload object (RFC 7396; the values are strings, never null).
  annotate: (id, notes) =>
    pipe(
      TE.fromEither(decode(Notes, `notes for job ${id}`)(notes)),
      TE.chain(() => attempt(conn, (c) => c.prepare('UPDATE jobs SET payload = json_patch(payload, ?) WHERE id = ?').run(JSON.stringify(notes), id))),
      TE.map(changed),
    ),

  retry: (id, worker, runAt, error) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'retry time')(runAt)),
      TE.chain(() =>
        attempt(conn, (c) =>
          c
            .prepare('UPDATE jobs SET locked_by = NULL, locked_until = NULL, run_at = ?, last_error = ? WHERE id = ? AND locked_by = ?')
            .run(runAt, error, id, worker),
        ),
      ),
      TE.map(() => undefined),
    ),

  bury: (id, worker, error) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare('UPDATE jobs SET dead = 1, locked_by = NULL, locked_until = NULL, last_error = ? WHERE id = ? AND locked_by = ?')
          .run(error, id, worker),
      ),
      TE.map(() => undefined),
    ),

  nextRunAt: (kinds) =>
    pipe(
      TE.fromEither(checkKinds(kinds)),
      TE.chain((unique) =>
        unique.length === 0
          ? TE.right(null)
          : pipe(
              // A leased job becomes claimable when its lease ends, not before.
              attempt(conn, (c) => c.prepare(nextRunAtSql(unique.length)).get(kindValues(unique))),
              TE.chainEitherK(decode(NextRow, 'next job time')),
              TE.map((r) => r.next),
            ),
      ),
    ),

  list: (filter) => {
    if (!Number.isSafeInteger(filter.limit) || filter.limit < 1)
      return TE.left(storeFailure(new RangeError(`list limit must be a positive integer, got ${filter.limit}`)));
    return pipe(
      TE.fromEither(checkKinds(filter.kinds ?? [])),
      TE.chain((kinds) => {
        const where: string[] = [];
        const params: unknown[] = [];
        if (kinds.length > 0) {
          where.push(`kind IN (${placeholders(kinds.length)})`);
          params.push(...kinds);
        }
        if (filter.failedOnly) where.push('last_error IS NOT NULL');
        if (filter.requestId !== undefined) {
          where.push("json_extract(payload, '$.requestId') = ?");
          params.push(filter.requestId);
        }
        if (filter.ids !== undefined) {
          // No ids, no jobs (and `IN ()` is no valid SQL).
          if (filter.ids.length === 0) return TE.right([]);
          where.push(`id IN (${placeholders(filter.ids.length)})`);
          params.push(...filter.ids);
        }
        return attempt(conn, (c) =>
          c
            .prepare(
              `SELECT ${COLUMNS}, dead, locked_by, locked_until FROM jobs
               ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''}
               ORDER BY run_at, id ${limitParam('?')}`,
            )
            .all(...params, filter.limit),
        );
      }),
      TE.chainEitherK(A.traverse(E.Applicative)(decodeQueuedRow)),
    );
  },

  // Through the dedupe key's unique index (the key, or a range of it), whatever the table holds.
  cancelWaiting: (tenant, match) =>
    pipe(
      TE.fromEither(dedupeKeyBounds(match)),
      TE.chain((keys) =>
        attempt(conn, (c) =>
          'key' in keys
            ? c.prepare(`DELETE FROM jobs WHERE dedupe_key = ? AND ${WAITING}`).run(keys.key, tenant.orgId, tenant.mode)
            : c.prepare(`DELETE FROM jobs WHERE dedupe_key >= ? AND dedupe_key < ? AND ${WAITING}`).run(keys.from, keys.to, tenant.orgId, tenant.mode),
        ),
      ),
      TE.map(() => undefined),
    ),

  revive: (id, now) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'revive time')(now)),
      TE.chain(() =>
        attempt(conn, (c) =>
          c
            .prepare(
              // A live lease means a worker is running the job now: leave it to finish.
              `UPDATE jobs SET dead = 0, attempts = 0, run_at = ?, locked_by = NULL, locked_until = NULL
               WHERE id = ? AND last_error IS NOT NULL AND (locked_until IS NULL OR locked_until <= ?)`,
            )
            .run(now, id, now),
        ),
      ),
      TE.map(changed),
    ),
});
