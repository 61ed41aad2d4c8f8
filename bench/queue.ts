/**
 * `npm run bench:queue [-- --sizes 100,1000,10000,100000 --db sqlite|postgres --backlog deliveries|reminders --repeat 200]`
 *
 * What a worker's queue statements cost as a backlog of other kinds' jobs grows. The server runs two workers:
 * one for webhook deliveries and one for the rest (mail, seals, expiry, reminders). When a receiver is down or
 * slow, deliveries pile up; the mail worker must still find its own jobs (or learn there are none) at the cost
 * of a short queue. Each size's figures are printed beside those of the first size (the baseline, 100 jobs,
 * measured in the same run), as a ratio: flat means the backlog costs nothing.
 *
 * `--backlog reminders` grows the other common backlog instead: every request sent schedules its automatic
 * reminder (`remind.auto`, 72 hours on by default), so an open request is a job that waits for days.
 *
 * The deliveries backlog is due `webhook.deliver` jobs, the oldest 16 leased by a running worker, inserted with one
 * statement per thousand rows (as the queue's own enqueue leaves them; not what is measured). On PostgreSQL the
 * table is never analyzed (autovacuum off for it), the state of a queue whose backlog grew since its last
 * ANALYZE. Each statement runs `--repeat` times through the store's port; the p50 is printed.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { JobKind, Stores, UnitOfWork } from '@esig/core';
import { JOB_KINDS } from '@esig/core';
import { openSqliteStore } from '@esig/store-sqlite';
import { openPostgresStore } from '@esig/store-postgres';
import { percentile, POSTGRES_URL_OPTION, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '100,1000,10000,100000' },
    db: { type: 'string', default: 'sqlite' },
    repeat: { type: 'string', default: '200' },
    backlog: { type: 'string', default: 'deliveries' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
/** Deliveries in flight: the backlog's oldest, leased by a running worker with 16 loops. */
const LEASED = 16;
const sizes = values.sizes!.split(',').map(Number);
const repeat = Number(values.repeat);
if (sizes.some((n, i) => !Number.isSafeInteger(n) || n < LEASED + 16 || (i > 0 && n <= sizes[i - 1]!))) {
  console.error(`--sizes is an increasing list of at least ${LEASED + 16} each (the first is the baseline)`);
  process.exit(2);
}
if (values.db !== 'sqlite' && values.db !== 'postgres') {
  console.error('--db is sqlite or postgres (postgres also runs sqlite, for comparison)');
  process.exit(2);
}

if (values.backlog !== 'deliveries' && values.backlog !== 'reminders') {
  console.error('--backlog is deliveries (due, some leased) or reminders (due in 72 hours)');
  process.exit(2);
}
const reminders = values.backlog === 'reminders';
/** The backlog's jobs: their kind, payload and time (ms from now), and whether a running worker holds them. */
const backlogJob = (i: number) =>
  reminders
    ? { kind: 'remind.auto', payload: { requestId: `req_${i}`, round: '1' }, at: 72 * 3_600_000 + i, leased: false }
    : { kind: 'webhook.deliver', payload: { deliveryId: `dlv_${i}` }, at: -3_600_000 + i, leased: i <= LEASED };

const WEBHOOK_KINDS: readonly JobKind[] = ['webhook.deliver', 'webhook.dispatch'];
const OTHER_KINDS: readonly JobKind[] = JOB_KINDS.filter((k) => !WEBHOOK_KINDS.includes(k));
const NOW = new Date('2026-06-01T12:00:00.000Z');
const iso = (ms: number) => new Date(NOW.getTime() + ms).toISOString();

interface Queue {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  /** Adds the backlog's jobs `from + 1` … `to`. */
  grow(from: number, to: number): Promise<void>;
  close(): Promise<void>;
}

const sqliteQueue = (): Queue => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-bench-queue-'));
  const path = join(dir, 'esig.db');
  const store = openSqliteStore({ path });
  const raw = new Database(path);
  const insert = raw.prepare(
    `INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, last_error, locked_by, locked_until)
     VALUES (?, ?, 'org_bench', 'test', ?, ?, 0, NULL, ?, NULL, ?, ?)`,
  );
  const add = raw.transaction((from: number, to: number) => {
    for (let i = from + 1; i <= to; i++) {
      const j = backlogJob(i);
      const at = iso(j.at);
      insert.run(`job_${String(i).padStart(26, '0')}`, j.kind, JSON.stringify(j.payload), at, at, j.leased ? 'worker-2' : null, j.leased ? iso(60_000) : null);
    }
  });
  return {
    stores: store.stores,
    uow: store.uow,
    grow: async (from, to) => {
      for (let n = from; n < to; n += 1_000) add(n, Math.min(to, n + 1_000));
    },
    close: async () => {
      raw.close();
      store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
};

const postgresQueue = async (adminUrl: string): Promise<Queue> => {
  const db = await throwawayPostgres(adminUrl);
  const store = await openPostgresStore({ url: db.url });
  const pg = (await import('pg')).default;
  const raw = new pg.Client({ connectionString: db.url });
  await raw.connect();
  await raw.query('ALTER TABLE jobs SET (autovacuum_enabled = false)');
  return {
    stores: store.stores,
    uow: store.uow,
    grow: async (from, to) => {
      for (let n = from; n < to; n += 1_000) {
        const rows = Array.from({ length: Math.min(to, n + 1_000) - n }, (_, k) => ({ i: n + k + 1, ...backlogJob(n + k + 1) }));
        await raw.query(
          `INSERT INTO jobs (id, kind, org_id, mode, payload, run_at, attempts, dedupe_key, created_at, locked_by, locked_until)
             SELECT id, kind, 'org_bench', 'test', payload, run_at, 0, NULL, run_at, locked_by, locked_until
             FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::text[], $6::timestamptz[])
               AS r(id, kind, payload, run_at, locked_by, locked_until)`,
          [
            rows.map((r) => `job_${String(r.i).padStart(26, '0')}`),
            rows.map((r) => r.kind),
            rows.map((r) => JSON.stringify(r.payload)),
            rows.map((r) => iso(r.at)),
            rows.map((r) => (r.leased ? 'worker-2' : null)),
            rows.map((r) => (r.leased ? iso(60_000) : null)),
          ],
        );
      }
    },
    close: async () => {
      await raw.end();
      await store.close();
      await db.drop();
    },
  };
};

/** p50 in ms of `repeat` runs of `op`, which must succeed. */
const time = async (op: () => Promise<E.Either<unknown, unknown>>): Promise<number> => {
  const took: number[] = [];
  for (let i = 0; i < repeat; i++) {
    const started = process.hrtime.bigint();
    const r = await op();
    took.push(Number(process.hrtime.bigint() - started) / 1e6);
    if (E.isLeft(r) && r.left !== ROLLED_BACK) throw new Error(`queue statement failed: ${JSON.stringify(r.left)}`);
  }
  return percentile(took, 50);
};

/** What a transaction that only measured returns, so that it rolls back and leaves the backlog as it was. */
const ROLLED_BACK = Symbol('rolled back');

type Scenario = readonly [string, () => Promise<E.Either<unknown, unknown>>];

const scenarios = (q: Queue): readonly Scenario[] => [
  ["mail worker's claim (none of its kinds due)", () => q.stores.jobs.claim(OTHER_KINDS, 'worker-1', iso(0), iso(30_000), 4)()],
  ["mail worker's next due time", () => q.stores.jobs.nextRunAt(OTHER_KINDS)()],
  ["delivery worker's next due time", () => q.stores.jobs.nextRunAt(WEBHOOK_KINDS)()],
  // Only a backlog of deliveries has 16 due to take.
  ...(reminders ? [] : [deliveryClaim(q)]),
];

const deliveryClaim = (q: Queue): Scenario => [
  "delivery worker's claim of 16 (rolled back)",
  () =>
    q.uow.transaction((tx) =>
      pipe(
        tx.jobs.claim(WEBHOOK_KINDS, 'worker-1', iso(0), iso(30_000), 16),
        TE.mapLeft((e): unknown => e),
        // Every run takes the same 16 (the backlog's oldest unleased): the transaction rolls back.
        TE.chain((jobs) => TE.left<unknown, never>(jobs.length === 16 ? ROLLED_BACK : `claimed ${jobs.length} of 16`)),
      ),
    )(),
];

const run = async (label: string, q: Queue) => {
  const rows: Array<{ size: number; p50: number[] }> = [];
  let grown = 0;
  try {
    for (const size of sizes) {
      await q.grow(grown, size);
      grown = size;
      const p50: number[] = [];
      for (const [, op] of scenarios(q)) {
        await time(op); // warm: statement caches, plans
        p50.push(await time(op));
      }
      rows.push({ size, p50 });
      process.stderr.write(`  ${label}: ${size} jobs measured\n`);
    }
  } finally {
    await q.close();
  }
  const names = scenarios(q).map(([name]) => name);
  process.stdout.write(`\n${label}: p50 ms per statement (× the first size's, the baseline measured first)\n`);
  process.stdout.write(`${'backlog'.padEnd(10)}${names.map((n) => n.padEnd(46)).join('')}\n`);
  for (const r of rows)
    process.stdout.write(
      `${String(r.size).padEnd(10)}${r.p50.map((ms, i) => `${ms.toFixed(3)}${r === rows[0] ? '' : ` (× ${(ms / rows[0]!.p50[i]!).toFixed(1)})`}`.padEnd(46)).join('')}\n`,
    );
};

process.stdout.write(`esig bench:queue — a backlog of ${reminders ? 'reminders due in 72 hours' : 'due webhook deliveries'}, ${repeat} runs per statement\n`);
await run('SQLite', sqliteQueue());
if (values.db === 'postgres') await run('PostgreSQL (never analyzed)', await postgresQueue(values['postgres-url']!));
