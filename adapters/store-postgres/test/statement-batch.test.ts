import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { batchable, parseOnConnect, sendBatch } from '../src/statement-batch.js';
import type { TestDatabase } from './pg.js';
import { available, countSyncs, createTestDatabase } from './pg.js';

describe.skipIf(!available)('statement batches: several statements, one Sync', () => {
  let db: TestDatabase;
  // A pipelining client, as the store's pool makes them: batches must work there.
  const connect = async () => {
    const c = new pg.Client({ connectionString: db.url, pipeline: true } as pg.ClientConfig);
    await c.connect();
    return c;
  };
  /** `f` on a client of its own, closed after it. */
  const withClient = async (f: (c: pg.Client) => Promise<void>) => {
    const c = await connect();
    try {
      await f(c);
    } finally {
      await c.end();
    }
  };
  const ids = async (c: pg.Client) => (await c.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map((r) => r.id);
  const insert = (id: number | string) => ({ stmt: 'INSERT INTO t (id) VALUES ($1)', values: [id] });

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.raw(async (c) => {
      await c.query('CREATE TABLE t (id integer PRIMARY KEY)');
      // Checked at COMMIT only: a COMMIT that fails.
      await c.query('CREATE TABLE d (id integer, CONSTRAINT d_unique UNIQUE (id) DEFERRABLE INITIALLY DEFERRED)');
    });
  });
  afterAll(async () => {
    await db?.drop();
  });

  it('runs every statement in order, with one Sync for all, and tells each command', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE t');
      const syncs = countSyncs();
      const outcome = await sendBatch(c, [insert(1), insert(2), { stmt: 'UPDATE t SET id = id + 10 WHERE id = $1', values: [2] }, { stmt: 'DELETE FROM t WHERE id = 1', values: [] }]);
      syncs.stop();
      expect(outcome).toEqual({ failedAt: null, commands: ['INSERT', 'INSERT', 'UPDATE', 'DELETE'] });
      expect(syncs.count()).toBe(1);
      expect(await ids(c)).toEqual([12]);
    }));

  it('a failed statement: those before it ran, it fails with its own error, those after it do not run; the connection serves on', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE t');
      await c.query('INSERT INTO t (id) VALUES (2)');
      // Outside a transaction the statements before a Sync are one implicit transaction: all of it rolls back.
      const alone = await sendBatch(c, [insert(1), insert(2), insert(3)]);
      expect(alone).toMatchObject({ failedAt: 1, commands: ['INSERT'], error: { code: '23505' } });
      expect(await ids(c)).toEqual([2]);
      // Inside one, the transaction is aborted: what ran before the failure is rolled back with it.
      await c.query('BEGIN');
      const inside = await sendBatch(c, [insert(4), insert(2), insert(5), { stmt: 'COMMIT', values: [] }]);
      expect(inside).toMatchObject({ failedAt: 1, commands: ['INSERT'], error: { code: '23505' } });
      // The COMMIT was skipped with the rest: the transaction is still open, and refuses statements.
      await expect(c.query('SELECT 1')).rejects.toMatchObject({ code: '25P02' });
      expect((await c.query('ROLLBACK')).command).toBe('ROLLBACK');
      expect(await ids(c)).toEqual([2]);
    }));

  it('a COMMIT that fails (a deferred constraint) fails as the batch member it is; nothing is committed', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE d');
      await c.query('BEGIN');
      const outcome = await sendBatch(c, [
        { stmt: 'INSERT INTO d (id) VALUES ($1)', values: [7] },
        { stmt: 'INSERT INTO d (id) VALUES ($1)', values: [7] },
        { stmt: 'COMMIT', values: [] },
      ]);
      expect(outcome).toMatchObject({ failedAt: 2, commands: ['INSERT', 'INSERT'], error: { code: '23505' } });
      // A failed COMMIT ends the transaction.
      expect((await c.query('SELECT count(*)::int AS n FROM d')).rows).toEqual([{ n: 0 }]);
    }));

  it('a value the driver cannot encode fails the batch before anything is sent', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE t');
      const syncs = countSyncs();
      const unencodable = { toPostgres: () => { throw new Error('cannot encode'); } };
      const outcome = await sendBatch(c, [insert(1), { stmt: 'INSERT INTO t (id) VALUES ($1)', values: [unencodable] }]);
      syncs.stop();
      expect(outcome).toMatchObject({ failedAt: 0, commands: [], error: { message: 'cannot encode' } });
      expect(syncs.count()).toBe(0);
      expect(await ids(c)).toEqual([]);
    }));

  it('statements queued behind a batch on the pipeline get their own answers, after it', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE t');
      const batch = sendBatch(c, [insert(1), insert(1)]);
      const after = c.query<{ n: number }>('SELECT count(*)::int AS n FROM t');
      expect(await batch).toMatchObject({ failedAt: 1 });
      expect((await after).rows).toEqual([{ n: 0 }]);
    }));

  it('takes a prepared statement only once its connection has parsed it', async () =>
    withClient(async (c) => {
      const named = { stmt: { name: 'esig_test_batch_insert', text: 'INSERT INTO t (id) VALUES ($1)' }, values: [30] };
      expect(batchable(c, [insert(1)])).toBe(true);
      expect(batchable(c, [insert(1), named])).toBe(false);
      await c.query('TRUNCATE t');
      await c.query({ name: named.stmt.name, text: named.stmt.text, values: [31] });
      expect(batchable(c, [insert(1), named])).toBe(true);
      // A name the connection parsed with another text is not the statement asked for.
      expect(batchable(c, [{ ...named, stmt: { ...named.stmt, text: 'INSERT INTO t (id) VALUES ($1 + 1)' } }])).toBe(false);
      expect(await sendBatch(c, [named, insert(1)])).toEqual({ failedAt: null, commands: ['INSERT', 'INSERT'] });
      expect(await ids(c)).toEqual([1, 30, 31]);
    }));

  it('parses prepared statements on a new connection in one round trip, and takes them in a batch sent before the answer', async () =>
    withClient(async (c) => {
      await c.query('TRUNCATE t');
      const named = { stmt: { name: 'esig_test_parsed_on_connect', text: 'INSERT INTO t (id) VALUES ($1)' }, values: [40] };
      const other = { name: 'esig_test_parsed_on_connect_2', text: 'SELECT count(*) FROM t WHERE id = $1' };
      const syncs = countSyncs();
      parseOnConnect(c, new Map([[named.stmt.name, named.stmt.text], [other.name, other.text]]));
      // Sent, not yet answered: a batch may name it, since PostgreSQL reads the connection's messages in order.
      expect(batchable(c, [named])).toBe(true);
      expect(await sendBatch(c, [named, insert(41)])).toEqual({ failedAt: null, commands: ['INSERT', 'INSERT'] });
      syncs.stop();
      expect(syncs.count()).toBe(2);
      // Recorded as parsed, as node-postgres records its own: its queries by name send no Parse.
      const parsed = (c as unknown as { connection: { parsedStatements: Record<string, string> } }).connection.parsedStatements;
      expect(parsed[named.stmt.name]).toBe(named.stmt.text);
      expect((await c.query({ name: other.name, text: other.text, values: [40] })).rows).toEqual([{ count: '1' }]);
      expect(await ids(c)).toEqual([40, 41]);
    }));

  it('a statement that cannot be parsed when the connection opens closes the connection; nothing runs on a statement it left out', async () => {
    const c = await connect();
    c.on('error', () => undefined);
    const later = { name: 'esig_test_after_broken', text: 'SELECT $1::int AS n' };
    parseOnConnect(c, new Map([['esig_test_ok', 'SELECT 1'], ['esig_test_broken', 'SELECT esig_no_such_function($1)'], [later.name, later.text]]));
    // Queued behind, by name: PostgreSQL skipped its Parse after the failed one, so it cannot run.
    const named = c.query({ name: later.name, text: later.text, values: [1] }).then(
      () => 'answered',
      (e: unknown) => String(e),
    );
    expect(await named).not.toBe('answered');
    // And the connection is closed: nothing else runs on it.
    await expect(c.query('SELECT 1')).rejects.toThrow();
    await c.end().catch(() => undefined);
  });
});
