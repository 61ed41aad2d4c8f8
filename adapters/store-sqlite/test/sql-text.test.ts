import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { KEPT_LENGTHS, bySize, placeholders } from '../src/sql-text.js';

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
