import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const POSTGRES_URL = process.env.ESIG_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** Whether the PostgreSQL of the tests answers; says how to run the tests when it does not. */
export const postgresAvailable = async (what: string): Promise<boolean> => {
  const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    console.warn(`\n  PostgreSQL not reachable at ${POSTGRES_URL}: ${what} skipped. Start PostgreSQL or set ESIG_TEST_POSTGRES_URL to run them (.ci/run starts one).\n`);
    return false;
  }
};

/** A throwaway database for one test file; `drop()` removes it. */
export const createTestDatabase = async (prefix: string) => {
  const name = `${prefix}_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const a = new pg.Client({ connectionString: POSTGRES_URL });
      await a.connect();
      await a.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await a.end();
    },
  };
};
