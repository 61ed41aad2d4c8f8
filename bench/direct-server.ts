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
 * With an `Idempotency-Key` header it also keeps the key's record, in the cheapest shape we know that is still
 * correct: the record (the key, a hash of the body, the answer) inserted in the same statement or transaction as
 * the write, with no claim committed before it. A fresh key costs one write more and nothing else; a key already
 * used fails that insert on the table's primary key, which undoes the whole write, and the stored answer is read
 * and replayed (or 422 for another body). A second call with the key while the first runs waits on the key's
 * index entry and then replays, where esig answers 409 at once and keeps no transaction open for the command's
 * whole run; the records' purge after 24 hours reads their creation index.
 *
 * Not done here, and done by esig: a claim that holds the key while the command runs (esig's is committed
 * first on PostgreSQL), the API log, the outbox event, validation of every field and
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

/** An Idempotency-Key with its call: the key, a hash of the body, and the answer to keep should the call succeed. */
interface Keyed {
  readonly key: string;
  readonly fingerprint: string;
  readonly answer: string;
}
/** A key already used: its stored answer (status and body) when the body matches, or `mismatch`. */
type Replay = { readonly status: number; readonly body: string | null } | 'mismatch';
type Create = (keyHash: string, id: string, title: string, documentId: string, keyed?: Keyed) => Promise<'created' | 'unauthorized' | 'limited' | 'taken' | Replay>;

/** The records of Idempotency-Keys: one per key and org, found by its primary key, purged by its creation. */
const RECORDS = (timestamp: string) => `CREATE TABLE IF NOT EXISTS idempotency (org_id TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
  status INTEGER NOT NULL, answer TEXT, created_at ${timestamp} NOT NULL, PRIMARY KEY (org_id, key));
  CREATE INDEX IF NOT EXISTS idempotency_by_creation ON idempotency (created_at);`;
const replayOf = (row: { fingerprint: string; status: number; answer: string | null } | undefined, keyed: Keyed): Replay =>
  row === undefined || row.fingerprint !== keyed.fingerprint ? 'mismatch' : { status: row.status, body: row.answer };

const postgres = async (url: string): Promise<Create> => {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  await pool.query(`
    CREATE TABLE IF NOT EXISTS api_keys (hash text PRIMARY KEY, org_id text NOT NULL, revoked boolean NOT NULL DEFAULT false);
    CREATE UNLOGGED TABLE IF NOT EXISTS rate_counts (bucket text PRIMARY KEY, win bigint NOT NULL, n bigint NOT NULL);
    CREATE TABLE IF NOT EXISTS documents (id text PRIMARY KEY, org_id text NOT NULL, request_id text);
    CREATE TABLE IF NOT EXISTS requests (id text PRIMARY KEY, org_id text NOT NULL, title text NOT NULL, created_at timestamptz NOT NULL DEFAULT now());
    ${RECORDS('timestamptz')}
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
  // The same write with the key's record: inserted whatever the outcome (201 with the answer, or 409), so a
  // retry gets the same answer; a key already used fails the insert, and the statement (its own transaction)
  // leaves nothing.
  const keyedWrite = {
    name: 'keyed-write',
    text: `WITH taken AS (UPDATE documents SET request_id = $1 WHERE id = $4 AND org_id = $2 AND request_id IS NULL RETURNING id),
           made AS (INSERT INTO requests (id, org_id, title) SELECT $1, $2, $3 FROM taken RETURNING id)
           INSERT INTO idempotency (org_id, key, fingerprint, status, answer, created_at)
           SELECT $2, $5, $6, CASE WHEN EXISTS (SELECT 1 FROM made) THEN 201 ELSE 409 END, (SELECT $7::text FROM made), now()
           RETURNING status`,
  };
  const recorded = { name: 'recorded', text: 'SELECT fingerprint, status, answer FROM idempotency WHERE org_id = $1 AND key = $2' };
  return async (keyHash, id, title, documentId, keyed) => {
    const a = await pool.query<{ n: string; org_id: string }>({ ...admit, values: [keyHash, Math.floor(Date.now() / WINDOW_MS)] });
    const row = a.rows[0];
    if (row === undefined) return 'unauthorized';
    if (Number(row.n) > LIMIT) return 'limited';
    if (keyed === undefined) {
      const w = await pool.query({ ...write, values: [id, row.org_id, title, documentId] });
      return w.rowCount === 1 ? 'created' : 'taken';
    }
    try {
      const w = await pool.query<{ status: number }>({ ...keyedWrite, values: [id, row.org_id, title, documentId, keyed.key, keyed.fingerprint, keyed.answer] });
      return w.rows[0]?.status === 201 ? 'created' : 'taken';
    } catch (e) {
      if ((e as { code?: string }).code !== '23505') throw e;
      const r = await pool.query<{ fingerprint: string; status: number; answer: string | null }>({ ...recorded, values: [row.org_id, keyed.key] });
      return replayOf(r.rows[0], keyed);
    }
  };
};

const sqlite = (file: string): Create => {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec(`
    CREATE TABLE IF NOT EXISTS documents (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, request_id TEXT);
    CREATE TABLE IF NOT EXISTS requests (id TEXT PRIMARY KEY, org_id TEXT NOT NULL, title TEXT NOT NULL, created_at TEXT NOT NULL);
    ${RECORDS('TEXT')}
  `);
  const seed = db.prepare("INSERT OR IGNORE INTO documents VALUES (?, 'org_direct', NULL)");
  db.transaction(() => {
    for (let i = 1; i <= documents; i++) seed.run(`doc_${i}`);
  })();
  const keys = new Map([[KEY_HASH, 'org_direct']]);
  const counts = new Map<string, { window: number; n: number }>();
  const take = db.prepare('UPDATE documents SET request_id = ? WHERE id = ? AND org_id = ? AND request_id IS NULL');
  const insert = db.prepare('INSERT INTO requests (id, org_id, title, created_at) VALUES (?, ?, ?, ?)');
  const record = db.prepare('INSERT INTO idempotency (org_id, key, fingerprint, status, answer, created_at) VALUES (?, ?, ?, ?, ?, ?)');
  const recorded = db.prepare('SELECT fingerprint, status, answer FROM idempotency WHERE org_id = ? AND key = ?');
  // The key's record in the write's transaction: a key already used fails its insert, which rolls it all back.
  const write = db.transaction((id: string, orgId: string, title: string, documentId: string, keyed?: Keyed) => {
    const now = new Date().toISOString();
    const made = take.run(id, documentId, orgId).changes === 1;
    if (made) insert.run(id, orgId, title, now);
    if (keyed !== undefined) record.run(orgId, keyed.key, keyed.fingerprint, made ? 201 : 409, made ? keyed.answer : null, now);
    return made;
  });
  return async (keyHash, id, title, documentId, keyed) => {
    const orgId = keys.get(keyHash);
    if (orgId === undefined) return 'unauthorized';
    const window = Math.floor(Date.now() / WINDOW_MS);
    const c = counts.get(keyHash);
    const n = c !== undefined && c.window === window ? ++c.n : (counts.set(keyHash, { window, n: 1 }), 1);
    if (n > LIMIT) return 'limited';
    try {
      return write.immediate(id, orgId, title, documentId, keyed) ? 'created' : 'taken';
    } catch (e) {
      if (keyed === undefined || (e as { code?: string }).code !== 'SQLITE_CONSTRAINT_PRIMARYKEY') throw e;
      return replayOf(recorded.get(orgId, keyed.key) as { fingerprint: string; status: number; answer: string | null } | undefined, keyed);
    }
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
  const answer = JSON.stringify({ id, title, status: 'DRAFT', documentIds });
  const key = req.headers['idempotency-key'];
  const keyed = typeof key === 'string' ? { key, fingerprint: createHash('sha256').update(JSON.stringify(req.body)).digest('hex'), answer } : undefined;
  try {
    const r = await create(keyHash, id, title, documentIds[0], keyed);
    if (r === 'created') return void res.status(201).type('json').send(answer);
    if (r === 'mismatch') return void res.status(422).end();
    if (typeof r === 'object') return void res.status(r.status).set('idempotency-replayed', 'true').type('json').send(r.body ?? '');
    res.status(r === 'unauthorized' ? 401 : r === 'limited' ? 429 : 409).end();
  } catch (e) {
    process.stderr.write(`${String(e)}\n`);
    res.status(500).end();
  }
});
const server = app.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
