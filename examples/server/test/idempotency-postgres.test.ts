import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { sendsOnceUnderConcurrency } from './idempotency-checks.js';
import { createTestDatabase, postgresAvailable } from './pg.js';

/**
 * The server's idempotency tests run on SQLite, whose transactions run one at a time; on PostgreSQL they run
 * side by side, and a new key's claim commits before its command. What a client sees must be the same: one
 * run, concurrent duplicates answered 409 idempotency_in_progress or replayed, the key bound to its first request.
 */
const available = await postgresAvailable('the PostgreSQL idempotency tests');

describe.skipIf(!available)('idempotency on PostgreSQL, transactions side by side', () => {
  let s: TestServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let n = 0;
  const freshKey = () => `idem-pg-${n++}`;
  beforeAll(async () => {
    db = await createTestDatabase('esig_idem');
    s = await startTestServer({ ESIG_DATABASE_URL: db.url, ESIG_MASTER_KEY: randomBytes(32).toString('hex'), ESIG_WORKERS: 'none' });
  });
  afterAll(async () => {
    await s?.close();
    await db?.drop();
  });

  /** The idempotency records of the database, as (key, state). */
  const records = async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      return (await c.query<{ key: string; state: string }>('SELECT key, state FROM idempotency_keys ORDER BY key')).rows;
    } finally {
      await c.end();
    }
  };

  it('creates a request once under 25 concurrent calls with one key: the others 409 idempotency_in_progress or a replay', async () => {
    const doc = await s.uploadPdf();
    const key = freshKey();
    const body = { title: 'Concurrent', documentIds: [doc.id] };
    const results = await Promise.all(Array.from({ length: 25 }, () => s.call('POST', '/api/v1/signature-requests', { body, headers: { 'idempotency-key': key } })));
    const created = results.filter((r) => r.status === 201);
    const inFlight = results.filter((r) => r.status === 409);
    expect(created.length + inFlight.length).toBe(25);
    expect(inFlight.every((r) => r.body.code === 'idempotency_in_progress')).toBe(true);
    expect(created.filter((r) => r.headers.get('idempotency-replayed') === null)).toHaveLength(1);
    expect(new Set(created.map((r) => r.text)).size).toBe(1);
    // One request holds the document; a late retry replays it.
    const id = created[0]!.body.id as string;
    const late = await s.call('POST', '/api/v1/signature-requests', { body, headers: { 'idempotency-key': key } });
    expect(late.status).toBe(201);
    expect(late.headers.get('idempotency-replayed')).toBe('true');
    expect(late.body.id).toBe(id);
    expect((await s.call('GET', `/api/v1/documents/${doc.id}`)).body.signatureRequestId).toBe(id);
    expect(await records()).toContainEqual({ key, state: 'completed' });
  });

  it('sends exactly once under 25 concurrent calls with one key', async () => {
    await sendsOnceUnderConcurrency(s, freshKey());
  });

  it('binds the key to its first request, and stores and replays an outcome error', async () => {
    const doc = await s.uploadPdf();
    const key = freshKey();
    const first = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'A', documentIds: [doc.id] }, headers: { 'idempotency-key': key } });
    expect(first.status).toBe(201);
    const other = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'B', documentIds: [doc.id] }, headers: { 'idempotency-key': key } });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    // The document is taken now: a new key's create-request fails in the command, and that outcome is kept.
    const taken = freshKey();
    const refused = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'C', documentIds: [doc.id] }, headers: { 'idempotency-key': taken } });
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);
    const again = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'C', documentIds: [doc.id] }, headers: { 'idempotency-key': taken } });
    expect(again.status).toBe(refused.status);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(refused.text);
    expect(await records()).toEqual(expect.arrayContaining([{ key, state: 'completed' }, { key: taken, state: 'completed' }]));
  });

  // Refused by the command's own check of its input (a blank title passes the body's codec), before any write: the
  // outcome is kept as any other, also when the command's unread form ran first (an attacker's review found it was not).
  it('stores and replays an input the command refuses, and the key then refuses another body', async () => {
    const doc = await s.uploadPdf();
    const key = freshKey();
    const call = (title: string) => s.call('POST', '/api/v1/signature-requests', { body: { title, documentIds: [doc.id] }, headers: { 'idempotency-key': key } });
    const blank = await call('   ');
    expect(blank.status).toBe(400);
    const again = await call('   ');
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(again.text).toBe(blank.text);
    const other = await call('Fixed');
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
  });
});

