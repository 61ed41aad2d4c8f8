import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../src/index.js';

const stat4Warnings = (spy: { mock: { calls: unknown[][] } }) =>
  spy.mock.calls.filter((args) => typeof args[1] === 'object' && args[1] !== null && (args[1] as { code?: string }).code === 'ESIG_SQLITE_STAT4');

describe('statistics from ANALYZE in the file', () => {
  afterEach(() => vi.restoreAllMocks());

  it('are warned about when the store opens, and nothing is said of a file without them', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-stat4-'));
    const file = path.join(dir, 'esig.db');
    const spy = vi.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    try {
      openSqliteStore({ path: file, checkpoint: 'inline' }).close();
      expect(stat4Warnings(spy)).toEqual([]);

      // What an operator's ANALYZE leaves: samples of an index of a table with rows.
      const raw = new Database(file);
      raw.exec('CREATE TABLE operator_t (a INTEGER, b TEXT); CREATE INDEX operator_t_a ON operator_t (a)');
      const insert = raw.prepare('INSERT INTO operator_t (a, b) VALUES (?, ?)');
      for (let i = 0; i < 200; i++) insert.run(i % 7, `row ${i}`);
      raw.exec('ANALYZE');
      expect(raw.prepare('SELECT count(*) FROM sqlite_stat4').pluck().get()).toBeGreaterThan(0);
      raw.close();

      openSqliteStore({ path: file, checkpoint: 'inline' }).close();
      expect(stat4Warnings(spy)).toHaveLength(1);
      expect(String(stat4Warnings(spy)[0]![0])).toMatch(/DELETE FROM sqlite_stat4/);

      // Emptied as the warning says, the file is quiet again.
      const again = new Database(file);
      again.exec('DELETE FROM sqlite_stat4');
      again.close();
      openSqliteStore({ path: file, checkpoint: 'inline' }).close();
      expect(stat4Warnings(spy)).toHaveLength(1);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
