/**
 * The second baseline for bench:api: a create-request written straight against the database driver, with
 * none of esig's code. Prints its port on stdout. `ESIG_DIRECT_DATABASE` is `sqlite:<file>` or a
 * `postgres://` URL of a database of its own (it creates its tables and seeds `ESIG_DIRECT_DOCUMENTS` documents,
 * `doc_1` on); `ESIG_DIRECT_KEY` is the one API key it accepts.
 *
 * Per request it does what any create-request behind an API key must: parse the JSON, hash the key, find the
 * key and count the call against a limit shared by every process, then in one transaction take the document
 * (only if it is free) and insert the request. On PostgreSQL that is two statements, the least there can be:
 * the key and its count in one, the write in another (a CTE, committed on its own). On SQLite the key and the
 * count stay in memory (one process), and the write is one synchronous transaction.
 *
 * Not done here, and done by esig: idempotency, the API log, the outbox event, validation of every field and
 * of the aggregate before it is written, problem+json, revocation at once across processes, a sliding (not a
 * fixed) window, versioned rows. So esig is expected to cost more; the gap between the two baselines is
 * what the database itself costs at the least, which no code on the request path can remove.
 */
import Database from 'better-sqlite3';
import express from 'express';
import { createHash } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import pg from 'pg';

const target = process.env.ESIG_DIRECT_DATABASE ?? '';
const documents = Number(process.env.ESIG_DIRECT_DOCUMENTS ?? '100000');
// The one API key, as bench:api sends it (stored hashed, as esig stores its keys).
const KEY_HASH = createHash('sha256').update(process.env.ESIG_DIRECT_KEY ?? '').digest('hex');
const LIMIT = 100_000_000;
const WINDOW_MS = 60_000;

type Create = (keyHash: string, id: string, title: string, documentId: string) => Promise<'created' | 'unauthorized' | 'limited' | 'taken'>;

const postgres = async (url: string): Promise<Create> => {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS api_keys (hash text PRIMARY KEY, org_id text NOT NULL, revoked boolean NOT NULL DEFAULT false);
    CREATE UNLOGGED TABLE IF NOT EXISTS rate_counts (bucket text PRIMARY KEY, win bigint NOT NULL, n bigint NOT NULL);
    CREATE TABLE IF NOT EXISTS documents (id text PRIMARY KEY, org_id text NOT NULL, request_id text);
    CREATE TABLE IF NOT EXISTS requests (id text PRIMARY KEY, org_id text NOT NULL, title text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    INSERT INTO api_keys VALUES ('${KEY_HASH}', 'org_direct') ON CONFLICT DO NOTHING;
    INSERT INTO documents SELECT 'doc_' || i, 'org_direct', NULL FROM generate_series(1, ${documents}) i ON CONFLICT DO NOTHING;
    ANALYZE;
  `);
  // The key and its call counted in one statement: a fixed window per key, the cheapest shared counter.
  const admit = {
    name: 'admit',
    text: `WITH k AS (SELECT org_id FROM api_keys WHERE hash = $1 AND NOT revoked)
           INSERT INTO rate_counts AS r (bucket, win, n) SELECT $1, $2, 1 FROM k
           ON CONFLICT (bucket) DO UPDATE SET n = CASE WHEN r.win = excluded.win THEN r.n + 1 ELSE 1 END, win = excluded.win
           RETURNING n, (SELECT org_id FROM k) AS org_id`,
  };
  // Take the document only if it is free, and insert the request only if it was taken: one statement, so
  // one transaction and one round trip.
  const write = {
    name: 'write',
    text: `WITH taken AS (UPDATE documents SET request_id = $1 WHERE id = $4 AND org_id = $2 AND request_id IS NULL RETURNING id)
           INSERT INTO requests (id, org_id, title) SELECT $1, $2, $3 FROM taken RETURNING id`,
  };
  return async (keyHash, id, title, documentId) => {
    const a = await pool.query<{ n: string; org_id: string }>({ ...admit, values: [keyHash, Math.floor(Date.now() / WINDOW_MS)] });
    const row = a.rows[0];
    if (row === undefined) return 'unauthorized';
    if (Number(row.n) > LIMIT) return 'limited';
    const w = await pool.query({ ...write, values: [id, row.org_id, title, documentId] });
    return w.rowCount === 1 ? 'created' : 'taken';
  };
};

const sqlite = (file: string): Create => {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, request_id TEXT);
    CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL);
  `);
  const seed = db.prepare("INSERT OR IGNORE INTO documents VALUES (?, 'org_direct', NULL)");
  db.transaction(() => {
    for (let i = 1; i <= documents; i++) seed.run(`doc_${i}`);
  })();
  const keys = new Map([[KEY_HASH, 'org_direct']]);
  const counts = new Map<string, { window: number; n: number }>();
  const take = db.prepare('UPDATE documents SET request_id = ? WHERE id = ? AND org_id = ? AND request_id IS NULL');
  const insert = db.prepare('INSERT INTO requests (id, org_id, title, created_at) VALUES (?, ?, ?, ?)');
  const write = db.transaction((id: string, orgId: string, title: string, documentId: string) => {
    if (take.run(id, documentId, orgId).changes !== 1) return false;
    insert.run(id, orgId, title, new Date().toISOString());
    return true;
  });
  return async (keyHash, id, title, documentId) => {
    const orgId = keys.get(keyHash);
    if (orgId === undefined) return 'unauthorized';
    const window = Math.floor(Date.now() / WINDOW_MS);
    const c = counts.get(keyHash);
    const n = c !== undefined && c.window === window ? ++c.n : (counts.set(keyHash, { window, n: 1 }), 1);
    if (n > LIMIT) return 'limited';
    return write.immediate(id, orgId, title, documentId) ? 'created' : 'taken';
  };
};

const create = target.startsWith('sqlite:') ? sqlite(target.slice('sqlite:'.length)) : await postgres(target);
let next = 0;
const app = express();
app.use(express.json());
app.post('/api/v1/signature-requests', async (req, res) => {
  const auth = req.headers.authorization ?? '';
  const keyHash = createHash('sha256').update(auth.startsWith('Bearer ') ? auth.slice(7) : '').digest('hex');
  const { title, documentIds } = req.body as { title?: unknown; documentIds?: unknown };
  if (typeof title !== 'string' || !Array.isArray(documentIds) || typeof documentIds[0] !== 'string') return void res.status(400).end();
  const id = `req_${process.pid}_${++next}`;
  try {
    const r = await create(keyHash, id, title, documentIds[0]);
    if (r === 'created') return void res.status(201).json({ id, title, status: 'DRAFT', documentIds });
    res.status(r === 'unauthorized' ? 401 : r === 'limited' ? 429 : 409).end();
  } catch (e) {
    process.stderr.write(`${String(e)}\n`);
    res.status(500).end();
  }
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
