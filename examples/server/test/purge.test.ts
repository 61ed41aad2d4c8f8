import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Stores } from '@esig/core';
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
});
