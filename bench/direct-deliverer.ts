/**
 * The second baseline for bench:webhooks: webhook deliveries written straight against the database driver,
 * with none of esig's code. It seeds `ESIG_DIRECT_DELIVERIES` pending deliveries (one endpoint, one job each)
 * in a database of its own (`ESIG_DIRECT_DATABASE`: `sqlite:<file>` or a `postgres://` URL), prints
 * `direct: ready`, and delivers them to `ESIG_DIRECT_RECEIVER` (HTTPS, its certificate in `ESIG_DIRECT_CA`),
 * `ESIG_DIRECT_LOOPS` at a time, on one keep-alive `https.Agent`, as the bare baseline POSTs. They go in
 * `ESIG_DIRECT_LANES` lanes (2 by default: measured against 1 and 4, it delivered the most on both stores).
 *
 * It does what any durable delivery must, and in the cheapest shape we know: each lane takes a batch, its share
 * of the loops, in one statement (leased, so a second process would not take them too), reads their
 * deliveries and endpoints, signs each body with its endpoint's secret, POSTs them all at once, and records all
 * of their outcomes in one transaction: the attempt, the delivery's new state, the job done (or due again, on
 * a failure). On PostgreSQL the claim with its read is one statement and the record one more; on SQLite they
 * are synchronous calls and one commit per batch. Every POST is recorded before the next batch is claimed, so
 * a killed worker leaves at most one batch of unrecorded POSTs per lane.
 *
 * Not done here, and done by esig: the receiver's name resolved and checked (SSRF) before each connection, a
 * connection reused only for the address it was checked for, the endpoint's secret stored encrypted, rows
 * decoded and checked, the API request log, the endpoint's health (failures counted, disabled after a run of
 * them), retries with backoff and jitter, leases renewed while a slow receiver holds a POST, each loop going on
 * as soon as its own outcome is recorded (not in lock step with the batch's slowest POST), one deadline for the
 * whole exchange (here only an idle socket times out), and redirects refused. So esig is expected to cost more. What this baseline shows is how much of the keep-alive
 * POST rate a delivery that is recorded at all can reach on this machine.
 */
import Database from 'better-sqlite3';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import pg from 'pg';

const target = process.env.ESIG_DIRECT_DATABASE ?? '';
const receiver = new URL(process.env.ESIG_DIRECT_RECEIVER ?? '');
const ca = readFileSync(process.env.ESIG_DIRECT_CA ?? '');
const count = Number(process.env.ESIG_DIRECT_DELIVERIES ?? '1000');
const loops = Number(process.env.ESIG_DIRECT_LOOPS ?? '16');
const LEASE_MS = 60_000;
const RETRY_MS = 5_000;

interface Claimed {
  readonly job: string;
  readonly delivery: string;
  readonly body: string;
  readonly url: string;
  readonly secret: string;
}
interface Outcome {
  readonly job: string;
  readonly delivery: string;
  readonly status: number;
  readonly ms: number;
}
interface Store {
  readonly claim: (n: number) => Promise<readonly Claimed[]>;
  readonly record: (outcomes: readonly Outcome[]) => Promise<void>;
}

/** The body of delivery i: an event much like the one esig sends for a new document. */
const bodyOf = (i: number) =>
  JSON.stringify({ id: `evt_${i}`, type: 'document.created', created: new Date().toISOString(), test_mode: true, data: { document_id: `doc_${i}`, status: 'UPLOADED' } });

const sqlite = (file: string): Store => {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE endpoints (id TEXT PRIMARY KEY, url TEXT NOT NULL, secret TEXT NOT NULL);
    CREATE TABLE deliveries (id TEXT PRIMARY KEY, endpoint_id TEXT NOT NULL, body TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL);
    CREATE TABLE attempts (id INTEGER PRIMARY KEY, delivery_id TEXT NOT NULL, status INTEGER NOT NULL, duration_ms INTEGER NOT NULL, created_at TEXT NOT NULL);
    CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
    CREATE TABLE jobs (id TEXT PRIMARY KEY, delivery_id TEXT NOT NULL, run_at TEXT NOT NULL, locked_until TEXT);
    CREATE INDEX jobs_due ON jobs (run_at, id);
  `);
  const addDelivery = db.prepare("INSERT INTO deliveries VALUES (?, 'end_1', ?, 'pending', 0)");
  const addJob = db.prepare('INSERT INTO jobs VALUES (?, ?, ?, NULL)');
  db.transaction(() => {
    db.prepare("INSERT INTO endpoints VALUES ('end_1', ?, 'whsec_direct')").run(receiver.href);
    const t0 = Date.now() - 60_000;
    for (let i = 0; i < count; i++) {
      const at = new Date(t0 + i).toISOString();
      addDelivery.run(`dlv_${i}`, bodyOf(i));
      addJob.run(`job_${String(i).padStart(9, '0')}`, `dlv_${i}`, at);
    }
  })();
  const claim = db.prepare(`UPDATE jobs SET locked_until = @lease WHERE id IN (
      SELECT id FROM jobs WHERE run_at <= @now AND (locked_until IS NULL OR locked_until <= @now) ORDER BY run_at, id LIMIT @n)
    RETURNING id, delivery_id`);
  const read = db.prepare('SELECT d.body, e.url, e.secret FROM deliveries d JOIN endpoints e ON e.id = d.endpoint_id WHERE d.id = ?');
  const attempt = db.prepare('INSERT INTO attempts (delivery_id, status, duration_ms, created_at) VALUES (?, ?, ?, ?)');
  const delivered = db.prepare("UPDATE deliveries SET status = 'delivered', attempts = attempts + 1 WHERE id = ?");
  const failed = db.prepare('UPDATE deliveries SET attempts = attempts + 1 WHERE id = ?');
  const done = db.prepare('DELETE FROM jobs WHERE id = ?');
  const again = db.prepare('UPDATE jobs SET run_at = ?, locked_until = NULL WHERE id = ?');
  const record = db.transaction((outcomes: readonly Outcome[]) => {
    const now = new Date();
    for (const o of outcomes) {
      attempt.run(o.delivery, o.status, o.ms, now.toISOString());
      if (o.status >= 200 && o.status < 300) {
        delivered.run(o.delivery);
        done.run(o.job);
      } else {
        failed.run(o.delivery);
        again.run(new Date(now.getTime() + RETRY_MS).toISOString(), o.job);
      }
    }
  });
  return {
    claim: async (n) => {
      const now = Date.now();
      const jobs = claim.all({ lease: new Date(now + LEASE_MS).toISOString(), now: new Date(now).toISOString(), n }) as Array<{ id: string; delivery_id: string }>;
      return jobs.map((j) => ({ job: j.id, delivery: j.delivery_id, ...(read.get(j.delivery_id) as { body: string; url: string; secret: string }) }));
    },
    record: async (outcomes) => record.immediate(outcomes),
  };
};

const postgres = async (url: string): Promise<Store> => {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  await pool.query(`
    CREATE TABLE endpoints (id text PRIMARY KEY, url text NOT NULL, secret text NOT NULL);
    CREATE TABLE deliveries (id text PRIMARY KEY, endpoint_id text NOT NULL, body text NOT NULL, status text NOT NULL, attempts int NOT NULL);
    CREATE TABLE attempts (id bigserial PRIMARY KEY, delivery_id text NOT NULL, status int NOT NULL, duration_ms int NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    CREATE INDEX attempts_by_delivery ON attempts (delivery_id);
    CREATE TABLE jobs (id text PRIMARY KEY, delivery_id text NOT NULL, run_at timestamptz NOT NULL, locked_until timestamptz);
    CREATE INDEX jobs_due ON jobs (run_at, id);
  `);
  await pool.query("INSERT INTO endpoints VALUES ('end_1', $1, 'whsec_direct')", [receiver.href]);
  const bodies = Array.from({ length: count }, (_, i) => bodyOf(i));
  await pool.query("INSERT INTO deliveries SELECT 'dlv_' || (i - 1), 'end_1', b, 'pending', 0 FROM unnest($1::text[]) WITH ORDINALITY AS t(b, i)", [bodies]);
  await pool.query(`INSERT INTO jobs SELECT 'job_' || lpad((i - 1)::text, 9, '0'), 'dlv_' || (i - 1), now() - interval '1 minute' + (i || ' ms')::interval, NULL
    FROM generate_series(1, ${count}) i`);
  await pool.query('ANALYZE');
  // The claim and the read in one statement: the jobs leased (skipping those another worker holds) and their
  // deliveries with their endpoints.
  const claim = {
    name: 'claim',
    text: `WITH c AS (
        UPDATE jobs SET locked_until = now() + interval '${LEASE_MS} ms' WHERE id IN (
          SELECT id FROM jobs WHERE run_at <= now() AND (locked_until IS NULL OR locked_until <= now()) ORDER BY run_at, id LIMIT $1 FOR UPDATE SKIP LOCKED)
        RETURNING id, delivery_id)
      SELECT c.id AS job, d.id AS delivery, d.body, e.url, e.secret FROM c JOIN deliveries d ON d.id = c.delivery_id JOIN endpoints e ON e.id = d.endpoint_id`,
  };
  // Every outcome of a batch in one statement, so one round trip and one transaction.
  const record = {
    name: 'record',
    text: `WITH o AS (SELECT * FROM unnest($1::text[], $2::text[], $3::int[], $4::int[]) AS o(job, delivery, code, ms)),
        a AS (INSERT INTO attempts (delivery_id, status, duration_ms) SELECT delivery, code, ms FROM o),
        d AS (UPDATE deliveries SET attempts = attempts + 1, status = CASE WHEN o.code BETWEEN 200 AND 299 THEN 'delivered' ELSE deliveries.status END
              FROM o WHERE deliveries.id = o.delivery),
        r AS (UPDATE jobs SET run_at = now() + interval '${RETRY_MS} ms', locked_until = NULL FROM o WHERE jobs.id = o.job AND o.code NOT BETWEEN 200 AND 299)
      DELETE FROM jobs USING o WHERE jobs.id = o.job AND o.code BETWEEN 200 AND 299`,
  };
  return {
    claim: async (n) => (await pool.query<Claimed>({ ...claim, values: [n] })).rows,
    record: async (outcomes) => {
      await pool.query({ ...record, values: [outcomes.map((o) => o.job), outcomes.map((o) => o.delivery), outcomes.map((o) => o.status), outcomes.map((o) => o.ms)] });
    },
  };
};

const store = target.startsWith('sqlite:') ? sqlite(target.slice('sqlite:'.length)) : await postgres(target);
const agent = new Agent({ keepAlive: true, ca });

/** One POST, signed as esig signs (`t=<seconds>,v1=<HMAC-SHA256 of "t.body">`); its status, 0 when it failed. */
const post = (c: Claimed): Promise<number> =>
  new Promise((resolve) => {
    const to = new URL(c.url);
    const t = Math.floor(Date.now() / 1000);
    const signature = createHmac('sha256', c.secret).update(`${t}.${c.body}`).digest('hex');
    const req = request(
      {
        method: 'POST',
        host: to.hostname,
        port: to.port,
        path: to.pathname,
        agent,
        timeout: 10_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(c.body), 'esig-signature': `t=${t},v1=${signature}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
    req.end(c.body);
  });

/**
 * One lane: claim a batch, POST it, record it, again. Lanes run side by side, `loops` POSTs at most in all, so
 * that one lane's POSTs go out while another waits for the database (on PostgreSQL a claim and a record are a
 * round trip each, and a single lane would leave the receiver idle meanwhile).
 */
const lane = async (size: number): Promise<never> => {
  for (;;) {
    const batch = await store.claim(size);
    if (batch.length === 0) {
      // The backlog is drained (a retry due later is not waited for: the bench counts the first attempts).
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    const outcomes = await Promise.all(
      batch.map(async (c): Promise<Outcome> => {
        const t0 = performance.now();
        const status = await post(c);
        return { job: c.job, delivery: c.delivery, status, ms: Math.round(performance.now() - t0) };
      }),
    );
    await store.record(outcomes);
  }
};

// Exits on the bench's SIGTERM through process.exit, so that a CPU profile (--cpu-prof) is written.
process.on('SIGTERM', () => process.exit(0));
process.stdout.write('direct: ready\n');
const lanes = Math.max(1, Math.min(loops, Number(process.env.ESIG_DIRECT_LANES ?? '2')));
await Promise.all(Array.from({ length: lanes }, (_, i) => lane(Math.floor(loops / lanes) + (i < loops % lanes ? 1 : 0))));
