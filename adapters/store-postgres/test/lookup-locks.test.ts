import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryConfig } from '../src/connection.js';
import { openPostgresStore } from '../src/index.js';
import { FIND_BY_ID_FOR_UPDATE } from '../src/signature-requests.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase } from './pg.js';

/**
 * A request locked for a change is locked only once it is known to be the caller's tenant's: another tenant who
 * guesses its id must not hold it, even for the length of a transaction (its owner's send or signature would wait).
 * The lookup has no fence since migration 0017 and keeps a generic plan, so both plans are tried.
 */
describe.skipIf(!available)("another tenant's request is never locked by its lookup", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await (await openPostgresStore({ url: db.url })).close();
    await db.raw((c) => c.query(`INSERT INTO signature_requests VALUES ('req_a1', 'org_a', 'test', 'DRAFT', '2026-01-01', 1, '{}')`));
  });
  afterAll(async () => db?.drop());

  it('under another org or mode, on custom plans and then on the generic one', async () => {
    const guesser = new pg.Client({ connectionString: db.url });
    const owner = new pg.Client({ connectionString: db.url });
    await guesser.connect();
    await owner.connect();
    try {
      // Custom plans first; then the generic one, forced (whether PostgreSQL would keep it depends on the table's
      // statistics: plan-cache.test.ts checks that it does).
      for (let call = 0; call < 8; call++) {
        if (call === 4) await guesser.query('SET plan_cache_mode = force_generic_plan');
        for (const tenant of [
          ['org_b', 'test'],
          ['org_a', 'live'],
        ]) {
          await guesser.query('BEGIN');
          expect((await guesser.query(queryConfig(FIND_BY_ID_FOR_UPDATE, ['req_a1', ...tenant]))).rowCount).toBe(0);
          // The owner locks its row at once: the guesser's transaction, still open, holds nothing of it.
          expect((await owner.query("SELECT id FROM signature_requests WHERE id = 'req_a1' FOR UPDATE NOWAIT")).rowCount).toBe(1);
          await guesser.query('ROLLBACK');
        }
      }
      const plans = await guesser.query<{ generic_plans: string }>('SELECT generic_plans FROM pg_prepared_statements WHERE name = $1', [FIND_BY_ID_FOR_UPDATE.name]);
      expect(Number(plans.rows[0]!.generic_plans), 'the generic plan was tried').toBeGreaterThan(0);
      // The owner's own lookup does lock it.
      await owner.query('BEGIN');
      expect((await owner.query(queryConfig(FIND_BY_ID_FOR_UPDATE, ['req_a1', 'org_a', 'test']))).rowCount).toBe(1);
      await expect(guesser.query("SELECT id FROM signature_requests WHERE id = 'req_a1' FOR UPDATE NOWAIT")).rejects.toMatchObject({ code: '55P03' });
      await owner.query('ROLLBACK');
    } finally {
      await guesser.end();
      await owner.end();
    }
  });
});
