// One measurement of `npm run bench:transactions` (bench/transactions.ts), in a process of its own so that each
// build's modules load apart: `node bench/transactions-child.mjs <root|raw> <database url> <transactions> <concurrency>`.
// Prints one JSON line: transactions per second, and the client's and the PostgreSQL backends' CPU per transaction.
import { readFileSync } from 'node:fs';
import pg from 'pg';

const [root, url, n, concurrency] = process.argv.slice(2);
const total = Number(n);
// Transactions run before the measurement: the pool's connections opened, its statements prepared on each.
const WARM_UP = 200;

const admin = new pg.Client({ connectionString: url });
await admin.connect();
// The backends of this process's pool: their CPU (utime + stime, in clock ticks of 10 ms) from /proc. Each run
// has a database of its own (bench/transactions.ts), so every other session on it is this process's pool.
const backendMs = async () => {
  const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
  let ticks = 0;
  for (const { pid } of rows) {
    try {
      const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // A backend on another machine, or gone: not counted.
    }
  }
  return ticks * 10;
};

let run; // (i) => Promise<void>: transaction i
let close;
if (root === 'raw') {
  // The baseline: the same five round trips (BEGIN, a read by key, an insert, an update, COMMIT) on node-postgres
  // alone, each awaited before the next, as code written straight against the driver does.
  await admin.query('CREATE TABLE IF NOT EXISTS bench_rows (id text PRIMARY KEY, org_id text NOT NULL, status text NOT NULL, data jsonb NOT NULL)');
  await admin.query('CREATE INDEX IF NOT EXISTS bench_rows_org ON bench_rows (org_id, status)');
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const find = { name: 'bench_find', text: 'SELECT id, org_id, status, data FROM bench_rows WHERE id = $1 AND org_id = $2' };
  const insert = { name: 'bench_insert', text: 'INSERT INTO bench_rows (id, org_id, status, data) VALUES ($1, $2, $3, $4)' };
  const update = { name: 'bench_update', text: "UPDATE bench_rows SET status = $1 WHERE org_id = $2 AND status = 'none'" };
  const runId = `${process.pid}`;
  run = async (i) => {
    const c = await pool.connect();
    try {
      await c.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      const id = `row_${runId}_${i}`;
      await c.query({ ...find, values: [id, 'org_bench'] });
      await c.query({ ...insert, values: [id, 'org_bench', 'UPLOADED', JSON.stringify({ id, name: 'bench.pdf', pages: 1 })] });
      await c.query({ ...update, values: ['UPLOADED', 'org_bench'] });
      await c.query('COMMIT');
    } finally {
      c.release();
    }
  };
  close = () => pool.end();
} else {
  // esig's unit of work over its PostgreSQL store, built at `root`: a transaction that reads a document by id,
  // inserts it, and updates the documents of a request (none), as a create-request reads, then writes twice.
  // Run as a command is (`deferWrites`); a build from before the option ignores it.
  const { openPostgresStore } = await import(`${root}/adapters/store-postgres/dist/index.js`);
  const { makeDocument, TENANT_A } = await import(`${root}/packages/testkit/dist/index.js`);
  const store = await openPostgresStore({ url });
  const docs = Array.from({ length: WARM_UP + total }, () => makeDocument(TENANT_A));
  run = async (i) => {
    const d = docs[i];
    const r = await store.uow.transaction((tx) => async () => {
      const found = await tx.documents.findById(TENANT_A, d.id)();
      if (found._tag === 'Left') return found;
      const inserted = await tx.documents.insert(d)();
      if (inserted._tag === 'Left') return inserted;
      return tx.documents.setStatusForRequest(TENANT_A, 'sr_bench', 'UPLOADED')();
      // As esig's commands run (execute): work that stops at a failed write lets the writes go out unanswered.
    }, { deferWrites: true })();
    if (r._tag === 'Left') throw new Error(`transaction failed: ${JSON.stringify(r.left)}`);
  };
  close = () => store.close();
}

let next = 0;
const loops = (end) => Promise.all(Array.from({ length: Number(concurrency) }, async () => {
  while (next < end) await run(next++);
}));
await loops(WARM_UP);
const b0 = await backendMs();
const c0 = process.cpuUsage();
const t0 = performance.now();
await loops(WARM_UP + total);
const wallMs = performance.now() - t0;
const cpu = process.cpuUsage(c0);
const b1 = await backendMs();
console.log(JSON.stringify({ perSecond: Math.round((total / wallMs) * 1000), clientUs: Math.round((cpu.user + cpu.system) / total), backendUs: Math.round(((b1 - b0) * 1000) / total) }));
await close();
await admin.end();
