import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OAuthClient, Stores } from '@esig/core';
import { SQLITE_IDEMPOTENCY_PURGE_BATCH, openSqliteStore } from '@esig/store-sqlite';
import { TENANT_A, TENANT_B, makeIdempotencyRecord, ok } from '@esig/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../src/index.js';
import { loadConfig, startServer } from '../src/index.js';
import { T } from '../src/tokens.js';

const dir = mkdtempSync(join(tmpdir(), 'esig-purge-'));
let running: RunningServer | null = null;
afterAll(async () => {
  await running?.close();
  rmSync(dir, { recursive: true, force: true });
});

const until = async (probe: () => Promise<boolean>, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
};

describe('the server with its workers', () => {
  it('deletes idempotency records an hour past their expiry as it starts, batch after batch, and keeps the others', async () => {
    const path = join(dir, 'esig.db');
    // Records left by an earlier run of the server: two and a half batches' worth expired two hours ago (past
    // the purge's grace of an hour), in both tenants; one an instant ago (within it), one expires tomorrow.
    const seeded = openSqliteStore({ path });
    const batch = SQLITE_IDEMPOTENCY_PURGE_BATCH;
    const expired = Array.from({ length: Math.floor(batch * 2.5) }, (_, i) =>
      makeIdempotencyRecord(i % 2 === 0 ? TENANT_A : TENANT_B, { expiresAt: new Date(Date.now() - 7_200_000 - i).toISOString() }),
    );
    const kept = [Date.now() - 1_000, Date.now() + 86_400_000].map((ms) => makeIdempotencyRecord(TENANT_A, { expiresAt: new Date(ms).toISOString() }));
    for (const r of [...expired, ...kept]) await ok(seeded.stores.idempotency.insertIfAbsent(r));
    seeded.close();

    running = await startServer(loadConfig({ ESIG_DATABASE_URL: `sqlite:${path}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error' }), () => undefined);
    // A batch's DELETE runs on the event loop the API shares: on SQLite it is kept to a fraction of a millisecond.
    expect(running.container.resolve(T.Database).idempotencyPurgeBatch).toBeLessThanOrEqual(100);
    const stores = running.container.resolve<Stores>(T.Stores);
    await until(async () => (await Promise.all(expired.map((r) => ok(stores.idempotency.find(r.tenant, r.key))))).every((x) => x === null), 'the purge');
    for (const r of kept) expect(await ok(stores.idempotency.find(r.tenant, r.key))).toEqual(r);
  });

  it('deletes registered OAuth clients that never reached consent a day after they registered, and keeps the others', async () => {
    const path = join(dir, 'oauth.db');
    const day = 86_400_000;
    const client = (name: string, ageMs: number): OAuthClient => ({ id: `ocl_${name.padEnd(26, '0').slice(0, 26)}`, name, redirectUris: ['http://127.0.0.1/cb'], kind: 'registered', createdAt: new Date(Date.now() - ageMs).toISOString() });
    const seeded = openSqliteStore({ path });
    const unused = Array.from({ length: 250 }, (_, i) => client(`UNUSED${String(i).padStart(4, '0')}`, day + 60_000 + i));
    const granted = client('GRANTED', 30 * day);
    const recent = client('RECENT', day - 60_000);
    for (const c of [...unused, granted, recent]) await ok(seeded.stores.oauth.insertClient(c));
    await ok(
      seeded.stores.oauth.insertGrant({ id: 'oag_01GRANT000000000000000000', orgId: 'org_1', mode: 'test', keyId: 'key_1', clientId: granted.id, clientName: granted.name, scopes: ['documents:read'], resource: 'http://x/mcp', createdAt: granted.createdAt, revokedAt: null }),
    );
    seeded.close();

    const server = await startServer(loadConfig({ ESIG_DATABASE_URL: `sqlite:${path}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error' }), () => undefined);
    try {
      const stores = server.container.resolve<Stores>(T.Stores);
      await until(async () => (await Promise.all(unused.map((c) => ok(stores.oauth.findClient(c.id))))).every((x) => x === null), 'the purge of unused clients');
      expect(await ok(stores.oauth.findClient(granted.id))).toEqual(granted);
      expect(await ok(stores.oauth.findClient(recent.id))).toEqual(recent);
    } finally {
      await server.close();
    }
  });
});
