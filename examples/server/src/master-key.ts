import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServerConfig } from './config.js';
import { ConfigError } from './config.js';

/** ESIG_MASTER_KEY, else `<dataDir>/master.key`, generated (mode 0600) on first start. */
export const loadMasterKey = (config: ServerConfig): Buffer => {
  if (config.masterKeyHex !== null) return Buffer.from(config.masterKeyHex, 'hex');
  const file = join(config.dataDir, 'master.key');
  if (existsSync(file)) {
    const hex = readFileSync(file, 'utf8').trim();
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) throw new ConfigError(`${file} does not hold 64 hex characters`);
    return Buffer.from(hex, 'hex');
  }
  if (config.database.kind === 'postgres')
    // Several processes must share one key: generating one per machine would make their secrets unreadable to each other.
    throw new ConfigError('ESIG_MASTER_KEY is required with PostgreSQL (64 hex characters, the same for every process).');
  mkdirSync(config.dataDir, { recursive: true });
  const key = randomBytes(32);
  writeFileSync(file, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
  return key;
};

