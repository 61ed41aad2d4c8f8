/**
 * `npm run bench:pages [-- --sizes 1000,100000 --db sqlite|postgres|both --repeat 30 --limit 50 --stats none|before]`
 *
 * The cost of one page of an org's documents (the store's keyset `list`, newest first, as
 * `GET /api/v1/documents` asks it), as the org grows: p50 of the first page, a page from the middle and
 * the last page, and the first and a middle page by status (`CANCELLED`, one document in 1,000), at each
 * size, on SQLite and PostgreSQL. The org grows through the store's own insert path (`documents.insert`),
 * in order, in batches of 5,000 inside transactions; another org's rows (a tenth as many) sit beside it,
 * as they would. Nothing runs ANALYZE but `--stats before`. Add 1000000 to `--sizes` for the million-row step (about 40 s on
 * SQLite and 5 to 7 minutes on PostgreSQL on the shared 2-core machine: one round trip per row, kept so that
 * the table is what the server's own inserts leave).
 *
 * `--stats before`: the other org's rows come first and PostgreSQL's ANALYZE runs once on them (as
 * autovacuum would while that org was the only one), then this org grows, unseen by the statistics.
 * SQLite is never analyzed (esig does not), so there it only changes the order of the rows.
 *
 * A flat row means the page cost does not depend on the org's size.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { Document, DocumentFilter, KeysetPosition, Stores, Tenant, UnitOfWork } from '@esig/core';
import { openPostgresStore } from '@esig/store-postgres';
import { openSqliteStore } from '@esig/store-sqlite';
import { percentile, POSTGRES_URL_OPTION, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    sizes: { type: 'string', default: '1000,100000' },
    db: { type: 'string', default: 'both' },
    repeat: { type: 'string', default: '30' },
    limit: { type: 'string', default: '50' },
    stats: { type: 'string', default: 'none' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const sizes = values.sizes.split(',').map(Number).sort((a, b) => a - b);
const repeat = Number(values.repeat);
const limit = Number(values.limit);
const ORG: Tenant = { orgId: 'org_bench_pages', mode: 'live' };
const NEIGHBOUR: Tenant = { orgId: 'org_bench_other', mode: 'live' };
const BASE = Date.UTC(2026, 0, 1);
const BATCH = 5_000;

const doc = (t: Tenant, i: number): Document => ({
  id: `doc_${t.orgId.slice(-5)}${String(i).padStart(21, '0')}`,
  orgId: t.orgId,
  mode: t.mode,
  name: `contract-${i}.pdf`,
  // One in 1,000 cancelled: the page by status reads a rare value.
  status: i % 1000 === 999 ? 'CANCELLED' : 'UPLOADED',
  pageCount: 2,
  pageSizes: [
    { width: 612, height: 792 },
    { width: 612, height: 792 },
  ],
  sizeBytes: 40_000,
  sha256: 'a'.repeat(64),
  signatureRequestId: null,
  // One a second, so positions are known without reading them back.
  createdAt: new Date(BASE + i * 1000).toISOString(),
});

const must = async <A>(te: TE.TaskEither<unknown, A>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(JSON.stringify(r.left).slice(0, 300));
  return r.right;
};

/** Inserts rows [from, to) of `t` through `documents.insert`, BATCH to a transaction. */
const grow = async (uow: UnitOfWork, t: Tenant, from: number, to: number) => {
  for (let b = from; b < to; b += BATCH) {
    const end = Math.min(to, b + BATCH);
    await must(uow.transaction((tx) => pipe(Array.from({ length: end - b }, (_, k) => doc(t, b + k)), TE.traverseSeqArray((d) => tx.documents.insert(d)))));
  }
};

const position = (i: number): KeysetPosition => ({ createdAt: doc(ORG, i).createdAt, id: doc(ORG, i).id });

/** p50 of `repeat` reads of one page, newest first, after `after`, with the status `filter` if given. */
const pageMs = async (stores: Stores, after: KeysetPosition | null, expect: number, filter: DocumentFilter = {}) => {
  const ms: number[] = [];
  for (let r = 0; r < repeat; r++) {
    const t = performance.now();
    const page = await must(stores.documents.list(ORG, { limit, order: 'desc', after, filter }));
    ms.push(performance.now() - t);
    if (page.items.length !== expect) throw new Error(`expected ${expect} rows, got ${page.items.length}`);
  }
  return percentile(ms, 50);
};

const runOn = async (
  label: string,
  open: () => Promise<{ stores: Stores; uow: UnitOfWork; close: () => Promise<void>; analyze: () => Promise<void> }>,
) => {
  const db = await open();
  const rows: string[] = [];
  try {
    let have = 0;
    if (values.stats === 'before') {
      await grow(db.uow, NEIGHBOUR, 0, Math.floor(sizes[sizes.length - 1]! / 10));
      await db.analyze();
    }
    for (const size of sizes) {
      const t0 = performance.now();
      await grow(db.uow, ORG, have, size);
      if (values.stats !== 'before') await grow(db.uow, NEIGHBOUR, Math.floor(have / 10), Math.floor(size / 10));
      const grew = (performance.now() - t0) / 1000;
      have = size;
      // Newest first: the first page starts at the top; a middle page after the row half-way down; the
      // last page after the row `limit` from the bottom (index `limit - 1` in creation order).
      const first = await pageMs(db.stores, null, limit);
      const middle = await pageMs(db.stores, position(Math.floor(size / 2)), limit);
      const last = await pageMs(db.stores, position(limit), limit);
      // By status: a full page wherever the org holds limit × 1,000 rows on that side of the cursor.
      const cancelled = { status: 'CANCELLED' } as const;
      const byStatus = await pageMs(db.stores, null, Math.min(limit, Math.floor(size / 1000)), cancelled);
      const byStatusMiddle = await pageMs(db.stores, position(Math.floor(size / 2)), Math.min(limit, Math.floor(size / 2 / 1000)), cancelled);
      rows.push(
        `${label.padEnd(12)} ${String(size).padStart(9)} ${[first, middle, last, byStatus, byStatusMiddle].map((x) => x.toFixed(2).padStart(10)).join(' ')}   (grown in ${grew.toFixed(1)} s)`,
      );
      process.stderr.write(`  ${label} ${size} rows measured\n`);
    }
  } finally {
    await db.close();
  }
  return rows;
};

const dir = mkdtempSync(join(tmpdir(), 'esig-bench-pages-'));
let drop = async () => undefined as void;
try {
  const out: string[] = [];
  if (values.db === 'sqlite' || values.db === 'both')
    out.push(
      ...(await runOn('SQLite', async () => {
        const s = openSqliteStore({ path: join(dir, 'esig.db') });
        return { stores: s.stores, uow: s.uow, close: async () => s.close(), analyze: async () => undefined };
      })),
    );
  if (values.db === 'postgres' || values.db === 'both') {
    const pg = await throwawayPostgres(values['postgres-url']);
    drop = pg.drop;
    // No ANALYZE (but with `--stats before`): the bench reads the table as it is after the inserts, as a
    // server would. Autovacuum stays off for the table whatever the server's setting, so that the
    // statistics are the ones the bench chose.
    out.push(
      ...(await runOn('PostgreSQL', async () => {
        const s = await openPostgresStore({ url: pg.url });
        await s.pool.query('ALTER TABLE documents SET (autovacuum_enabled = false)');
        return { stores: s.stores, uow: s.uow, close: () => s.close(), analyze: async () => void (await s.pool.query('ANALYZE documents')) };
      })),
    );
  }
  process.stdout.write(
    `\nesig bench:pages — documents.list, ${limit} a page, newest first; p50 of ${repeat} reads (ms); another org with a tenth as many rows beside it${values.stats === 'before' ? ', analyzed before this org grew' : ''}\n\n`,
  );
  process.stdout.write(`${'store'.padEnd(12)} ${'rows'.padStart(9)} ${['first', 'middle', 'last', 'st. first', 'st. middle'].map((h) => h.padStart(10)).join(' ')}\n`);
  for (const r of out) process.stdout.write(`${r}\n`);
} finally {
  await drop();
  rmSync(dir, { recursive: true, force: true });
}
