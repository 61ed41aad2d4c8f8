// The unit of work's tests over a relay (commit-outcome, begin-in-batch) need only a table of ids and a write the
// unit of work may defer into it: one throwaway database each, made and dropped around the test file.
import type { Stores, UnitOfWork } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { createNestingGuard } from '@esig/store-sql';
import pg from 'pg';
import { afterAll, beforeAll } from 'vitest';
import type { Conn } from '../src/connection.js';
import { TYPES, anyRows, write } from '../src/connection.js';
import { createUnitOfWork } from '../src/unit-of-work.js';
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

/**
 * The store's unit of work over `url` (a relay's), its pool made as the store makes it (pipelining, a query timeout)
 * with one connection; work sees its connection as `tx.documents`.
 */
export const oneConnectionUnitOfWork = (url: string, queryTimeoutMs: number): { readonly pool: pg.Pool; readonly uow: UnitOfWork } => {
  const pool = new pg.Pool({ connectionString: url, types: TYPES, max: 1, query_timeout: queryTimeoutMs, pipeline: true } as pg.PoolConfig);
  pool.on('error', () => undefined);
  return { pool, uow: createUnitOfWork(pool, (conn) => ({ documents: conn }) as unknown as Stores, () => undefined, createNestingGuard(false)) };
};

/** Ids for one test's rows, above those the file's earlier tests left in `t`; `base` is how many those are. */
export const freshIds = async (ids: () => Promise<number[]>): Promise<{ readonly base: number; readonly id: (n: number) => number }> => {
  const base = (await ids()).length;
  return { base, id: (n) => base * 10 + n };
};
