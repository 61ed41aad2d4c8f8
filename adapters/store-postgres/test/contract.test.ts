import { describeStoreContract } from '@esig/testkit';
import { afterAll, beforeAll, describe } from 'vitest';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase, emptyAllTables } from './pg.js';

describe.skipIf(!available)('store-postgres', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await (await openPostgresStore({ url: db.url })).close();
  });
  afterAll(async () => {
    await db?.drop();
  });

  // One database, migrated once; every test starts from empty tables on a pool of its own.
  describeStoreContract('postgres', async () => {
    // Checked as in development: a transaction begun inside another's work fails instead of hanging the suite.
    const store = await openPostgresStore({ url: db.url, migrate: false, checkNesting: true });
    await emptyAllTables(store.pool);
    return { stores: store.stores, uow: store.uow, onNewJobs: store.onNewJobs, cleanup: () => store.close() };
  });
});
