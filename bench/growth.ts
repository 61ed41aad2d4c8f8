/**
 * `npm run bench:growth [-- --db sqlite|postgres|both --steps 1000,10000,25000,50000,100000 --requests 1000 --warm-up 10000 --connections 16]`
 *
 * Whether a create-request's cost depends on how many documents the org holds. One org is grown step by
 * step (1 k to 100 k documents by default) straight into the database, the way uploads leave the table:
 * rows inserted over time and never analyzed (no ANALYZE; on a server with autovacuum off, or before it
 * comes round, the planner has no statistics). At each step `--requests` create-requests go through the
 * HTTP API of `esig serve` (its own process, ESIG_WORKERS=none) and the req/s and latencies are printed,
 * after `--warm-up` create-requests (10,000) in another org, so that the first step is not also the server's warm-up,
 * beside a bare Express handler measured in the same run. Flat figures down the steps are the goal.
 *
 * Growing goes around the API on purpose: uploading 100 k PDFs through it would take the bench's whole time
 * and measures uploads, not the create path. The rows are what `DocumentStore.insert` writes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { createKeyStandalone, loadConfig } from '@esig/server';
import type { Figures } from './lib.js';
import autocannon from 'autocannon';
import { measure, POSTGRES_URL_OPTION, printTable, startProcess, throwawayPostgres } from './lib.js';
import { benchServerEnv } from './create-requests.js';

/**
 * Like lib.ts `measure`, but for a fixed number of requests, with req/s over the time they took: from the start
 * to the last answer. Not to the end of autocannon's run, which ends at its next one-second sample after the
 * last answer: 1,000 requests answered in 1.2 s then count as 2 s, and every step's rate came out a whole number
 * of seconds (488, 489, 489… req/s whatever the server did).
 */
const measureAmount = (name: string, opts: autocannon.Options): Promise<Figures> =>
  new Promise((resolve, reject) => {
    const started = performance.now();
    let last = started;
    const instance = autocannon(opts, (err, r) => {
      if (err) return reject(err);
      const seconds = (last - started) / 1000;
      resolve({ name, rps: r.requests.total / seconds, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx + r.errors });
    });
    instance.on('response', () => {
      last = performance.now();
    });
  });

const { values } = parseArgs({
  options: {
    db: { type: 'string', default: 'both' },
    steps: { type: 'string', default: '1000,10000,25000,50000,100000' },
    requests: { type: 'string', default: '1000' },
    // Create-requests made before the first step, in an org of their own: without them the first step is also the
    // server's warm-up (V8 still compiling the request path), slower for that alone.
    'warm-up': { type: 'string', default: '10000' },
    connections: { type: 'string', default: '16' },
    check: { type: 'boolean', default: false },
    // Another checkout of esig (built) whose server to measure, to compare two versions (see bench:api).
    'server-root': { type: 'string' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const steps = values.steps!.split(',').map(Number);
const requests = Number(values.requests);
const warmUp = Number(values['warm-up']);
const connections = Number(values.connections);
const root = new URL('..', import.meta.url).pathname;
const serverRoot = values['server-root'] ?? root;
const dir = mkdtempSync(join(tmpdir(), 'esig-growth-'));
const masterKey = randomBytes(32).toString('hex');

/** A document id the API accepts: `doc_` and 26 characters, distinct per i (and per prefix: `G` grown, `W` warm-up). */
const docId = (i: number, prefix: 'G' | 'W' = 'G') => `doc_${prefix}${String(i).padStart(25, '0')}`;

/** Inserts documents [from, to) of the org, as free uploaded documents, without touching statistics. */
type Grow = (orgId: string, from: number, to: number, prefix?: 'G' | 'W') => Promise<void>;

const sqliteGrow =
  (path: string): Grow =>
  async (orgId, from, to, prefix = 'G') => {
    const db = new Database(path, { timeout: 5_000 });
    try {
      const insert = db.prepare(
        `INSERT INTO documents (id, org_id, mode, name, status, page_count, page_sizes, size_bytes, sha256, signature_request_id, created_at)
         VALUES (?, ?, 'test', 'grown.pdf', 'UPLOADED', 1, NULL, 1000, ?, NULL, ?)`,
      );
      const sha = 'a'.repeat(64);
      const t0 = Date.now() - (to - from);
      db.transaction(() => {
        for (let i = from; i < to; i++) insert.run(docId(i, prefix), orgId, sha, new Date(t0 + i - from).toISOString());
      })();
    } finally {
      db.close();
    }
  };

const postgresGrow =
  (url: string): Grow =>
  async (orgId, from, to, prefix = 'G') => {
    const pg = (await import('pg')).default;
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    try {
      // In batches, as uploads arrive over time.
      for (let a = from; a < to; a += 5_000)
        await c.query(
          `INSERT INTO documents (id, org_id, mode, name, status, page_count, page_sizes, size_bytes, sha256, signature_request_id, created_at)
           SELECT 'doc_' || $4::text || lpad(i::text, 25, '0'), $1, 'test', 'grown.pdf', 'UPLOADED', 1, NULL, 1000, repeat('a', 64), NULL,
                  date_trunc('milliseconds', now()) - (($3::int - i) * interval '1 millisecond')
           FROM generate_series($2::int, $3::int - 1) AS i`,
          [orgId, a, Math.min(to, a + 5_000), prefix],
        );
    } finally {
      await c.end();
    }
  };

/** Create-requests with `secret`, the i-th over the document `doc(i)`: each request takes one. */
const creates = (secret: string, title: string, doc: (i: number) => string): autocannon.Request[] => {
  let next = 0;
  return [
    {
      method: 'POST',
      path: '/api/v1/signature-requests',
      setupRequest: (req: any) => {
        const i = next++;
        return {
          ...req,
          headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' },
          body: JSON.stringify({ title: `${title} ${i}`, documentIds: [doc(i)] }),
        };
      },
    },
  ];
};

const run = async (label: string, databaseUrl: string, grow: Grow): Promise<Figures[]> => {
  const env = benchServerEnv(databaseUrl, masterKey, { ESIG_LOG_LEVEL: 'warn' });
  const issued = await createKeyStandalone(loadConfig(env), { orgName: 'growth', mode: 'test', scopes: ['*'], name: 'growth' });
  const esig = await startProcess([join(serverRoot, 'examples/server/bin/esig.mjs'), 'serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/);
  if (values.check) {
    await grow(issued.org.id, 99_000_000, 99_000_002);
    const r = await fetch(`http://127.0.0.1:${esig.match[1]}/api/v1/signature-requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${issued.secret}`, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'check', documentIds: [docId(99_000_001)] }),
    });
    process.stderr.write(`  ${label}: check ${r.status} ${await r.text()}\n${r.status === 201 ? "" : esig.output()}\n`);
  }
  const figures: Figures[] = [];
  try {
    const url = `http://127.0.0.1:${esig.match[1]}`;
    if (warmUp > 0) {
      // An org of its own, so the measured org holds only its steps' documents; its documents are in the same
      // tables, as another org's would be.
      const warm = await createKeyStandalone(loadConfig(env), { orgName: 'growth-warm-up', mode: 'test', scopes: ['*'], name: 'warm-up' });
      await grow(warm.org.id, 0, warmUp, 'W');
      const r = await measureAmount('warm-up', { url, connections, amount: warmUp, requests: creates(warm.secret, 'Warm-up', (i) => docId(i, 'W')) });
      process.stderr.write(`  ${label}: warmed up with ${r.requests} create-requests in another org (${r.non2xx} not 2xx)\n`);
    }
    let size = 0;
    for (const step of steps) {
      const started = Date.now();
      await grow(issued.org.id, size, step);
      size = step;
      process.stderr.write(`  ${label}: ${size} documents (grown in ${((Date.now() - started) / 1000).toFixed(1)} s), measuring…\n`);
      // The newest documents are free; each request takes one.
      const n = Math.min(requests, Math.floor(step / 2));
      figures.push(
        await measureAmount(`${label}, ${step.toLocaleString('en')} documents in the org`, {
          url,
          connections,
          amount: n,
          requests: creates(issued.secret, 'Growth', (i) => docId(step - 1 - (i % n))),
        }),
      );
    }
  } finally {
    await esig.stop();
  }
  return figures;
};

const bare = await startProcess(['--import', 'tsx', join(root, 'bench/bare-server.ts')], process.env, /listening (\d+)/);
let dropDatabase = async () => undefined as void;
try {
  process.stdout.write(`esig bench:growth — create-request as one org grows (${steps.join(', ')} documents), ${requests} requests per step, ${connections} connections\n`);
  const figures: Figures[] = [
    await measure('bare Express handler (baseline)', {
      url: `http://127.0.0.1:${bare.match[1]}/bare`, connections, duration: 5, method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Bench', documentIds: ['doc_x'] }),
    }),
  ];
  if (values.db === 'sqlite' || values.db === 'both') {
    const path = join(dir, 'esig.db');
    figures.push(...(await run('SQLite', `sqlite:${path}`, sqliteGrow(path))));
  }
  if (values.db === 'postgres' || values.db === 'both') {
    const db = await throwawayPostgres(values['postgres-url']!);
    dropDatabase = db.drop;
    figures.push(...(await run('PostgreSQL', db.url, postgresGrow(db.url))));
  }
  printTable(figures);
  const base = figures[0]!;
  for (const f of figures.slice(1)) process.stdout.write(`${f.name}: ${((f.rps / base.rps) * 100).toFixed(1)} % of the baseline's throughput\n`);
} finally {
  await bare.stop();
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
}
