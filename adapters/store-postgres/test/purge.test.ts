import { TENANT_A, at, makeIdempotencyRecord, ok } from '@esig/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

describe.skipIf(!available)('purging idempotency records beside their writers', () => {
  let db: TestDatabase;
  let store: PostgresStore;
  let holder: pg.Client;
  let watcher: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    store = await openPostgresStore({ url: db.url, poolSize: 2 });
    holder = new pg.Client({ connectionString: db.url });
    watcher = new pg.Client({ connectionString: db.url });
    await Promise.all([holder.connect(), watcher.connect()]);
  });
  afterAll(async () => {
    await holder?.end();
    await watcher?.end();
    await store?.close();
    await db?.drop();
  });

  // The attack: a record expired when the purge picked its batch, and a caller took its key over (a new,
  // live record) before the DELETE reached the row. Deleting it then would let a retry run the operation again.
  // What keeps it is the re-check of the row's address: the new version has moved. The statement's second
  // `expires_at` condition is a second guard this test cannot tell apart (it fails the primary-key form).
  it('a record replaced with a later expiry while the purge waits for its row is kept', async () => {
    const record = makeIdempotencyRecord(TENANT_A, { expiresAt: at(10) });
    const other = makeIdempotencyRecord(TENANT_A, { expiresAt: at(5) });
    for (const r of [record, other]) await ok(store.stores.idempotency.insertIfAbsent(r));
    const replaced = { ...record, fingerprint: 'taken over', expiresAt: at(100_000) };

    await holder.query('BEGIN');
    await holder.query('UPDATE idempotency_keys SET fingerprint = $1, expires_at = $2 WHERE org_id = $3 AND mode = $4 AND key = $5', [
      replaced.fingerprint,
      replaced.expiresAt,
      record.tenant.orgId,
      record.tenant.mode,
      record.key,
    ]);
    // Who waits is read on its own connection, one transaction per look: inside the holder's transaction
    // pg_stat_activity is a snapshot taken at the first look and kept until COMMIT, so a first look taken
    // before the purge waited would never see it wait (CI's failure, on a loaded machine). That first look is
    // taken here on purpose, every run.
    const holderPid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
    const waiting = async () =>
      (
        await watcher.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid)) AND query LIKE 'WITH deleted AS (%DELETE FROM idempotency_keys%'",
          [holderPid],
        )
      ).rows[0]!.n;
    expect(await waiting()).toBe(0);
    const purging = store.stores.idempotency.purgeExpired(at(20), 10)();
    // The purge has taken its batch and waits for the row the holder has changed.
    for (const end = Date.now() + 20_000; (await waiting()) === 0; ) {
      if (Date.now() > end) throw new Error('the purge never waited for the row');
      await new Promise((r) => setTimeout(r, 10));
    }
    await holder.query('COMMIT');

    expect(await ok(() => purging)).toEqual({ deleted: 1, through: other.expiresAt });
    expect(await ok(store.stores.idempotency.find(record.tenant, record.key))).toEqual(replaced);
    expect(await ok(store.stores.idempotency.find(other.tenant, other.key))).toBeNull();
  });

  // Found by hand: an operator's `UPDATE … SET expires_at = now() - interval '2 hours'` wrote microseconds,
  // and the batch that deleted the row then failed to report what it had deleted.
  it('a batch deleting rows written by hand (microseconds, -infinity) reports them, its end rounded down', async () => {
    const [fine, minus] = [makeIdempotencyRecord(TENANT_A), makeIdempotencyRecord(TENANT_A)];
    for (const r of [fine, minus]) await ok(store.stores.idempotency.insertIfAbsent(r));
    await db.raw((c) => c.query("UPDATE idempotency_keys SET expires_at = timestamptz '2026-01-01 00:00:00.123456+00' WHERE key = $1", [fine.key]));
    await db.raw((c) => c.query("UPDATE idempotency_keys SET expires_at = '-infinity' WHERE key = $1", [minus.key]));
    expect(await ok(store.stores.idempotency.purgeExpired(at(0), 1))).toEqual({ deleted: 1, through: null });
    expect(await ok(store.stores.idempotency.purgeExpired(at(0), 1, null))).toEqual({ deleted: 1, through: '2026-01-01T00:00:00.123Z' });
    for (const r of [fine, minus]) expect(await ok(store.stores.idempotency.find(r.tenant, r.key))).toBeNull();
  });
});
