// The unit of work's tests over a relay (commit-outcome, begin-in-batch) need only a table of ids and a write the
// unit of work may defer into it: one throwaway database each, made and dropped around the test file.
import { concurrentModification } from '@esig/core';
import { afterAll, beforeAll } from 'vitest';
import type { Conn } from '../src/connection.js';
import { anyRows, write } from '../src/connection.js';
import type { TestDatabase } from './pg.js';
import { createTestDatabase } from './pg.js';

export const INSERT = 'INSERT INTO t (id) VALUES ($1)';

/** A write the unit of work may defer: it raises on a conflict, as the stores' writes do. */
export const insert = (c: Conn, id: number) => write(c, `${INSERT} ON CONFLICT DO NOTHING`, [id], anyRows, (code) => concurrentModification('t', code), INSERT)();

/** Registers the hooks that make the database (with `t (id integer PRIMARY KEY)`) before the file's tests and drop it after. */
export const tableT = (): { readonly db: () => TestDatabase; readonly ids: () => Promise<number[]> } => {
  let db: TestDatabase | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.raw((c) => c.query('CREATE TABLE t (id integer PRIMARY KEY)'));
  });
  afterAll(async () => {
    await db?.drop();
  });
  const made = () => {
    if (db === undefined) throw new Error('the test database is made before the tests run');
    return db;
  };
  return { db: made, ids: () => made().raw(async (c) => (await c.query<{ id: number }>('SELECT id FROM t ORDER BY id')).rows.map((x) => x.id)) };
};
