import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { createConn } from '../src/connection.js';
import { KEPT_LENGTHS, bySize, limitParam, placeholders } from '../src/sql-text.js';

describe('bySize', () => {
  it('gives what the builder gives, for any length', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 300 }), (n) => {
        expect(placeholders(n)).toBe(Array.from({ length: n }, () => '?').join(', '));
      }),
    );
  });

  it('builds a kept length once, and longer lists each time', () => {
    let calls = 0;
    const sql = bySize((n) => {
      calls += 1;
      return `IN (${placeholders(n)})`;
    });
    expect(sql(3)).toBe('IN (?, ?, ?)');
    expect(sql(3)).toBe('IN (?, ?, ?)');
    expect(sql(KEPT_LENGTHS)).toBe(sql(KEPT_LENGTHS));
    expect(calls).toBe(2);
    // Past the bound nothing is kept: a caller sending ever longer lists cannot grow the memo.
    sql(KEPT_LENGTHS + 1);
    sql(KEPT_LENGTHS + 1);
    expect(calls).toBe(4);
  });
});

describe('limitParam', () => {
  const rows = () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY); INSERT INTO t (id) VALUES (1), (2), (3), (4), (5)');
    return createConn(db);
  };

  it('limits as a bare parameter does, and refuses what a bare one refuses', () => {
    const conn = rows();
    const stmt = conn.prepare(`SELECT id FROM t ORDER BY id ${limitParam('?')}`).pluck();
    expect(stmt.all(2)).toEqual([1, 2]);
    expect(stmt.all(0)).toEqual([]);
    expect(stmt.all(-1)).toEqual([1, 2, 3, 4, 5]);
    expect(conn.prepare(`SELECT id FROM t ORDER BY id ${limitParam('@n')}`).pluck().all({ n: 4 })).toEqual([1, 2, 3, 4]);
    const bare = conn.db.prepare('SELECT id FROM t ORDER BY id LIMIT ?');
    for (const bad of ['two', 2.5]) {
      const why = (f: () => unknown) => {
        try {
          f();
          return null;
        } catch (e) {
          return (e as Error).message;
        }
      };
      expect(why(() => stmt.all(bad))).toBe(why(() => bare.all(bad)));
      expect(why(() => stmt.all(bad))).not.toBeNull();
    }
  });

  it('is the only way a connection takes a parameter in LIMIT', () => {
    const conn = rows();
    for (const sql of ['SELECT id FROM t LIMIT ?', 'SELECT id FROM t LIMIT @limit', 'select id from t limit :n', 'SELECT id FROM t\n  LIMIT  $n', 'SELECT id FROM t LIMIT ?1'])
      expect(() => conn.prepare(sql), sql).toThrow(/prepare the statement at every run/);
    for (const sql of ['SELECT id FROM t LIMIT 1', `SELECT id FROM t ${limitParam('?')}`, `SELECT id FROM t ${limitParam('@limit')}`, 'SELECT id AS limited FROM t'])
      expect(() => conn.prepare(sql), sql).not.toThrow();
  });
});
