import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.js';
import { loadMasterKey } from '../src/master-key.js';

// What configuration.md and deployment.md say of the master key, store by store.
describe('loadMasterKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'esig-master-key-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const GIVEN = 'ab'.repeat(32);
  const sqlite = (env: Record<string, string> = {}) => loadConfig({ ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`, ...env });
  const postgres = (env: Record<string, string> = {}) => loadConfig({ ESIG_DATABASE_URL: 'postgres://esig@db.invalid:5432/esig', ESIG_DATA_DIR: dir, ...env });

  it('SQLite: generated into the data directory on first start (owner only), the same key after', () => {
    const first = loadMasterKey(sqlite());
    const file = join(dir, 'master.key');
    expect(statSync(file).mode & 0o077).toBe(0);
    expect(readFileSync(file, 'utf8').trim()).toBe(first.toString('hex'));
    expect(loadMasterKey(sqlite()).equals(first)).toBe(true);
  });

  it('ESIG_MASTER_KEY wins over a key file, on either store, and writes nothing', () => {
    writeFileSync(join(dir, 'master.key'), `${'cd'.repeat(32)}\n`);
    expect(loadMasterKey(sqlite({ ESIG_MASTER_KEY: GIVEN })).toString('hex')).toBe(GIVEN);
    expect(loadMasterKey(postgres({ ESIG_MASTER_KEY: GIVEN })).toString('hex')).toBe(GIVEN);
  });

  it('PostgreSQL: no key is ever generated; with neither the variable nor a key file, the start is refused', () => {
    expect(() => loadMasterKey(postgres())).toThrow(ConfigError);
    expect(() => loadMasterKey(postgres())).toThrow(/ESIG_MASTER_KEY is required with PostgreSQL/);
    expect(() => statSync(join(dir, 'master.key'))).toThrow();
  });

  it('PostgreSQL: a key file already in the data directory is used (an earlier SQLite start wrote it, or the operator put it there)', () => {
    const key = 'ef'.repeat(32);
    writeFileSync(join(dir, 'master.key'), `${key}\n`);
    expect(loadMasterKey(postgres()).toString('hex')).toBe(key);
  });

  it('a key file that is not 64 hex characters is refused, not replaced', () => {
    writeFileSync(join(dir, 'master.key'), 'not a key\n');
    expect(() => loadMasterKey(sqlite())).toThrow(/does not hold 64 hex characters/);
    expect(readFileSync(join(dir, 'master.key'), 'utf8')).toBe('not a key\n');
  });
});
