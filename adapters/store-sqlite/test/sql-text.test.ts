import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readFileSync, readdirSync } from 'node:fs';
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

  /** A parameter as LIMIT's count: `LIMIT ?`, `LIMIT (@n)`, or the second of `LIMIT <offset>, ?`. */
  const BARE = /\bLIMIT\s*(?:\(\s*)*[?@:$#]|\bLIMIT\s+[^,;)`]+,\s*(?:\(\s*)*[?@:$#]/i;

  it('is how every statement of this store binds a LIMIT (no bare parameter in its sources)', () => {
    for (const bare of ['LIMIT ?', 'limit :n', 'LIMIT\n  @limit', 'LIMIT $n', 'LIMIT ?1', 'LIMIT(?)', 'LIMIT ( ( ? ) )', 'LIMIT 10, ?', 'LIMIT #n'])
      expect(BARE.test(bare), bare).toBe(true);
    for (const fine of ["${limitParam('?')}", 'LIMIT 1', 'LIMIT +?', 'AS limited FROM t'])
      expect(BARE.test(fine), fine).toBe(false);
    const src = new URL('../src/', import.meta.url);
    const files = readdirSync(src).filter((f) => f.endsWith('.ts'));
    expect(files.length).toBeGreaterThan(10);
    // Comments may quote the bare form (sql-text.ts's does); statements are not written on comment lines.
    const comment = /^\s*(?:\*|\/\/|\/\*)/;
    const found = files.flatMap((f) => readFileSync(new URL(f, src), 'utf8').split('\n').map((line, i) => ({ f, i, line })).filter(({ line }) => !comment.test(line) && BARE.test(line)));
    expect(found.map(({ f, i, line }) => `${f}:${i + 1}: ${line.trim()}`)).toEqual([]);
  });
});
