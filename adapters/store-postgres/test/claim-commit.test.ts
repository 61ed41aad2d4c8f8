import type { Stores } from '@esig/core';
import { TENANT_A, makeIdempotencyRecord } from '@esig/testkit';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { CLAIM_IF_ABSENT } from '../src/idempotency.js';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase, emptyAllTables } from './pg.js';

/**
 * A new key's claim, made on the pool, commits without waiting for its WAL to reach the disk; nothing else does
 * (see CLAIM_IF_ABSENT for why that loses nothing). What must never happen: the setting outliving the claim's
 * transaction (a pooled connection left asynchronous would commit the next command, an accepted write, without
 * the flush), or a record inserted in a command's transaction turning that transaction asynchronous.
 */
describe.skipIf(!available)('the idempotency claim on PostgreSQL: a commit without the flush, for the claim alone', () => {
  let db: TestDatabase;
  let s: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    // One connection, so that what the claim leaves on its connection is what the next statement finds.
    s = await openPostgresStore({ url: db.url, poolSize: 1 });
  });
  afterAll(async () => {
    await s?.close();
    await db?.drop();
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await emptyAllTables(s.pool);
  });

  const params = (key: string) => {
    const r = makeIdempotencyRecord(TENANT_A, { key });
    return [r.tenant.orgId, r.tenant.mode, r.key, r.fingerprint, r.state, null, r.createdAt, r.lockedUntil, r.expiresAt];
  };
  const setting = async (c: pg.ClientBase) => (await c.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]!.s;

  it("turns synchronous_commit off for its own transaction, and the transaction's end turns it back", async () => {
    await db.raw(async (c) => {
      expect(await setting(c)).toBe('on');
      await c.query('BEGIN');
      expect((await c.query({ text: CLAIM_IF_ABSENT.text, values: params('k1') })).rowCount).toBe(1);
      expect(await setting(c)).toBe('off');
      await c.query('COMMIT');
      expect(await setting(c)).toBe('on');
      // On its own (an implicit transaction, as on the pool), and when the key is taken (nothing inserted) too.
      for (const key of ['k2', 'k2']) {
        await c.query({ text: CLAIM_IF_ABSENT.text, values: params(key) });
        expect(await setting(c)).toBe('on');
      }
      expect((await c.query('SELECT count(*)::int AS n FROM idempotency_keys')).rows[0]!.n).toBe(2);
    });
  });

  /** The names of the prepared statements sent while `f` runs, by any client. */
  const statementsSent = async (f: () => Promise<void>): Promise<string[]> => {
    const names: string[] = [];
    const query = pg.Client.prototype.query;
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as { name?: string } | undefined;
      if (typeof config === 'object' && config !== null && typeof config.name === 'string') names.push(config.name);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    await f();
    vi.restoreAllMocks();
    return names;
  };

  it('the pool claims with it, and its connection answers the next statement synchronously', async () => {
    const rec = makeIdempotencyRecord(TENANT_A, { key: 'claimed' });
    const sent = await statementsSent(async () => {
      expect(await s.stores.idempotency.insertIfAbsent(rec)()).toEqual(E.right(true));
      expect(await s.stores.idempotency.insertIfAbsent(rec)()).toEqual(E.right(false));
    });
    expect(sent).toEqual([CLAIM_IF_ABSENT.name, CLAIM_IF_ABSENT.name]);
    expect((await s.pool.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s")).rows[0]!.s).toBe('on');
    expect(await s.stores.idempotency.find(TENANT_A, 'claimed')()).toEqual(E.right(rec));
  });

  it("a record inserted in a transaction commits with it, synchronously, as the transaction's other writes do", async () => {
    const rec = makeIdempotencyRecord(TENANT_A, { key: 'in-tx' });
    // The transaction's client, as the spy sees it send the insert; read on it inside the work, the setting is the
    // transaction's own.
    let txClient: pg.Client | null = null;
    const query = pg.Client.prototype.query;
    const names: string[] = [];
    vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
      const config = args[0] as { name?: string } | undefined;
      if (typeof config === 'object' && config !== null && typeof config.name === 'string') {
        names.push(config.name);
        if (config.name.startsWith('esig_idempotency_')) txClient = this;
      }
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    } as typeof query);
    let inside = '';
    const r = await s.uow.transaction((tx: Stores) => async () => {
      const inserted = await tx.idempotency.insertIfAbsent(rec)();
      if (E.isLeft(inserted)) return inserted;
      inside = await setting(txClient!);
      return inserted;
    })();
    vi.restoreAllMocks();
    expect(r).toEqual(E.right(true));
    expect(names).not.toContain(CLAIM_IF_ABSENT.name);
    expect(inside).toBe('on');
    expect(await s.stores.idempotency.find(TENANT_A, 'in-tx')()).toEqual(E.right(rec));
  });
});
