/**
 * `npm run bench:purge [-- --records 300000 --batches 150 --batch 1000]`
 *
 * What deleting a backlog of expired idempotency records costs on PostgreSQL, batch by batch, the way the
 * workers' purge runs it (`purgeExpired` through the store's port). Each deleted batch leaves dead entries at
 * the start of the expiry index until VACUUM; a purge that starts every batch from the first record reads
 * past all of them again. The baseline, in the same run on the same data, is exactly that: every batch from
 * the first record. esig's purge starts each batch where the last one ended.
 *
 * The table has autovacuum off and another session holds a `REPEATABLE READ` snapshot throughout, as a long
 * report or backup would: nothing cleans the dead entries while the purge runs.
 */
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import type { PurgedBatch } from '@esig/core';
import { openPostgresStore } from '@esig/store-postgres';
import { POSTGRES_URL_OPTION, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '300000' },
    batches: { type: 'string', default: '150' },
    batch: { type: 'string', default: '1000' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const records = Number(values.records);
const batches = Number(values.batches);
const batch = Number(values.batch);
if (![records, batches, batch].every((n) => Number.isSafeInteger(n) && n > 0) || batches * batch > records) {
  console.error('--records, --batches and --batch are positive whole numbers, with batches × batch at most records');
  process.exit(2);
}

const pg = (await import('pg')).default;
const NOW = '2030-01-01T00:00:00.000Z';

/** A fresh database with `records` expired records, and a session holding a snapshot over it. */
const setUp = async () => {
  const db = await throwawayPostgres(values['postgres-url']!);
  const store = await openPostgresStore({ url: db.url, poolSize: 2 });
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  await c.query('ALTER TABLE idempotency_keys SET (autovacuum_enabled = false)');
  await c.query(
    `INSERT INTO idempotency_keys (org_id, mode, key, fingerprint, state, response, created_at, locked_until, expires_at)
       SELECT 'org_' || (i % 50), 'test', 'key-' || i, 'fp', 'completed', '{}', timestamptz '2026-01-01', timestamptz '2026-01-01',
              timestamptz '2026-01-01' + i * interval '1 second'
       FROM generate_series(1, $1::int) AS i`,
    [records],
  );
  await c.query('ANALYZE idempotency_keys');
  await c.query('BEGIN ISOLATION LEVEL REPEATABLE READ');
  await c.query('SELECT count(*) FROM idempotency_keys');
  return {
    store,
    close: async () => {
      await c.query('ROLLBACK');
      await c.end();
      await store.close();
      await db.drop();
    },
  };
};

/** Milliseconds per batch over `batches` batches, each from the last one's end or from the first record. */
const measure = async (resume: boolean): Promise<number[]> => {
  const { store, close } = await setUp();
  try {
    const times: number[] = [];
    let from: string | null = null;
    for (let i = 0; i < batches; i++) {
      const started = process.hrtime.bigint();
      const r = await store.stores.idempotency.purgeExpired(NOW, batch, resume ? from : null)();
      times.push(Number(process.hrtime.bigint() - started) / 1e6);
      if (E.isLeft(r)) throw new Error(`purge failed: ${r.left._tag}`);
      const done: PurgedBatch = r.right;
      if (done.deleted !== batch) throw new Error(`batch ${i + 1} deleted ${done.deleted}, not ${batch}`);
      from = done.through;
    }
    return times;
  } finally {
    await close();
  }
};

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const tenth = Math.max(1, Math.floor(batches / 10));
const row = (label: string, t: readonly number[]) =>
  `${label.padEnd(44)} ${mean(t.slice(0, tenth)).toFixed(1).padStart(8)} ms ${mean(t.slice(-tenth)).toFixed(1).padStart(8)} ms ${(t.reduce((a, b) => a + b, 0) / 1000).toFixed(2).padStart(8)} s`;

process.stdout.write(`esig bench:purge — PostgreSQL, ${records} expired records, ${batches} batches of ${batch}, a snapshot held throughout\n\n`);
process.stdout.write(`${''.padEnd(44)} ${`first ${tenth}`.padStart(11)} ${`last ${tenth}`.padStart(11)} ${'all'.padStart(10)}\n`);
const baseline = await measure(false);
process.stdout.write(`${row('every batch from the first record (baseline)', baseline)}\n`);
const esig = await measure(true);
process.stdout.write(`${row('esig: each batch from where the last ended', esig)}\n`);
process.stdout.write(`\nthe last ${tenth} batches took ${(mean(esig.slice(-tenth)) / mean(baseline.slice(-tenth))).toFixed(2)}× the baseline's time\n`);
