import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKeyStandalone, loadConfig } from '../src/index.js';
import { createTestDatabase, postgresAvailable } from './pg.js';
import { startEsig } from './spawn.js';

const available = await postgresAvailable('the cross-process revocation test (2 API processes on PostgreSQL)');

/** A database two processes share: a throwaway PostgreSQL database, or a SQLite file in a temporary folder. */
interface SharedDatabase {
  readonly url: string;
  drop(): Promise<void>;
}

const sqliteFile = async (): Promise<SharedDatabase> => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-revoke-'));
  return { url: `sqlite:${join(dir, 'esig.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
};

const cases: ReadonlyArray<{ name: string; skip: boolean; open: () => Promise<SharedDatabase> }> = [
  { name: 'PostgreSQL', skip: !available, open: () => createTestDatabase('esig_revoke') },
  // Two processes on one file: each keeps API keys in memory, and must still hear of the other's revocation.
  { name: 'SQLite', skip: false, open: sqliteFile },
];

/**
 * An attacker keeps using a key after it was revoked, sending the next request to another API process than
 * the one that revoked it (behind a load balancer, the usual case). Revocation must hold there on the very
 * next request: whatever either process remembers of the key (a cache, a warmed connection) must not let
 * it through. The key is used on both processes before it is revoked, so anything they keep of it is warm.
 */
describe.each(cases)('revoking a key takes effect at once in every API process ($name)', ({ skip, open }) => {
  const children: ChildProcess[] = [];
  let db: SharedDatabase;
  let urls: [string, string];
  let admin: string;

  beforeAll(async () => {
    if (skip) return;
    db = await open();
    const env = {
      ...process.env,
      ESIG_DATABASE_URL: db.url,
      ESIG_MASTER_KEY: randomBytes(32).toString('hex'),
      ESIG_PORT: '0',
      ESIG_HOST: '127.0.0.1',
      ESIG_LOG_LEVEL: 'warn',
      ESIG_WORKERS: 'none',
    };
    admin = (await createKeyStandalone(loadConfig(env), { orgName: 'victim', mode: 'test', scopes: ['*'], name: 'admin' })).secret;
    const ready = /esig: listening on http:\/\/[^:]+:(\d+)/;
    const [a, b] = await Promise.all([startEsig(['serve'], env, ready, children), startEsig(['serve'], env, ready, children)]);
    urls = [`http://127.0.0.1:${a.match[1]}`, `http://127.0.0.1:${b.match[1]}`];
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await db?.drop();
  });

  const call = async (base: string, key: string, method: string, path: string, body?: unknown) => {
    const r = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: r.status, body: (await r.json()) as any };
  };

  it.skipIf(skip)('a key revoked through one process is refused by the other on the very next request, and by the first', async () => {
    for (let round = 0; round < 5; round++) {
      const created = await call(urls[0], admin, 'POST', '/api/v1/api-keys', { name: `stolen-${round}`, scopes: ['documents:read'] });
      expect(created.status).toBe(201);
      const stolen: string = created.body.secret;
      // Warm: the key works on both processes, several times.
      for (let i = 0; i < 3; i++) for (const u of urls) expect((await call(u, stolen, 'GET', '/api/v1/documents')).status).toBe(200);
      const revokedOn = round % 2;
      const [revoker, other] = revokedOn === 0 ? [urls[0], urls[1]] : [urls[1], urls[0]];
      expect((await call(revoker, admin, 'DELETE', `/api/v1/api-keys/${created.body.id}`)).status).toBe(200);
      // No pause: the very next request, on the other process first.
      const next = await call(other, stolen, 'GET', '/api/v1/documents');
      expect(next.status).toBe(401);
      expect(next.body.code).toBe('unauthenticated');
      expect((await call(revoker, stolen, 'GET', '/api/v1/documents')).status).toBe(401);
    }
  });
});
