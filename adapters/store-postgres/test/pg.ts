import { randomBytes } from 'node:crypto';
import net from 'node:net';
import pg from 'pg';

/** The server the tests create their throwaway databases on (a maintenance database's URL). */
export const SERVER_URL = process.env.ESIG_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

/** The URL without its password, for messages. */
const shown = (url: string): string => {
  try {
    const u = new URL(url);
    if (u.password !== '') u.password = '***';
    return u.toString();
  } catch {
    return '(unparseable URL)';
  }
};

const admin = async <A>(f: (c: pg.Client) => Promise<A>): Promise<A> => {
  const c = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3_000 });
  c.on('error', () => undefined);
  await c.connect();
  try {
    return await f(c);
  } finally {
    await c.end().catch(() => undefined);
  }
};

const probe = async (): Promise<string | null> => {
  try {
    await admin((c) => c.query('SELECT 1'));
    return null;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
};

const whyNot = await probe();

/**
 * Whether a PostgreSQL server answers at SERVER_URL. When not, the suites are skipped (reported as
 * skipped, with this message), never failed and never passed.
 */
export const available = whyNot === null;
if (!available)
  console.warn(
    `PostgreSQL not reachable at ${shown(SERVER_URL)} (${whyNot}): store-postgres tests skipped; set ESIG_TEST_POSTGRES_URL or start PostgreSQL to run them`,
  );

export interface TestDatabase {
  readonly name: string;
  readonly url: string;
  /** Runs statements on the database itself, outside any store (to corrupt rows, inspect plans). */
  raw<A>(f: (c: pg.Client) => Promise<A>): Promise<A>;
  drop(): Promise<void>;
}

/** Creates an empty database `esig_test_<random>`; `drop` removes it, whoever is still connected. */
export const createTestDatabase = async (): Promise<TestDatabase> => {
  const name = `esig_test_${randomBytes(6).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const u = new URL(SERVER_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  return {
    name,
    url,
    raw: async (f) => {
      const c = new pg.Client({ connectionString: url });
      c.on('error', () => undefined);
      await c.connect();
      try {
        return await f(c);
      } finally {
        await c.end().catch(() => undefined);
      }
    },
    drop: () => admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
};

/**
 * Empties every table but the migration bookkeeping. DELETE rather than TRUNCATE: the tables hold a few
 * rows between tests, and TRUNCATE's new files cost far more than deleting them.
 */
export const emptyAllTables = async (c: Pick<pg.ClientBase, 'query'>): Promise<void> => {
  const { rows } = await c.query<{ t: string }>(
    "SELECT quote_ident(tablename) AS t FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'schema_migrations'",
  );
  await c.query(rows.map((r) => `DELETE FROM ${r.t};`).join('\n'));
};

/**
 * A throwaway database migrated by the store, and one client of the store's pool for statements outside
 * any store (seeding tables, EXPLAIN); `close` gives the client back, closes the store and drops the database.
 */
export const migratedTestClient = async (): Promise<{ client: pg.PoolClient; close: () => Promise<void> }> => {
  const { openPostgresStore } = await import('../src/index.js');
  const db = await createTestDatabase();
  const store = await openPostgresStore({ url: db.url });
  const client = await store.pool.connect();
  return {
    client,
    close: async () => {
      client.release();
      await store.close();
      await db.drop();
    },
  };
};

/**
 * Rows of `table` a statement read, sequentially or through an index, from the transaction's own counters
 * (`pg_stat_xact_user_tables`): what it cost, where an EXPLAIN of a function's call does not show the plans
 * inside. The statement runs in a transaction that is rolled back, so it leaves the data as it was.
 */
export const rowsRead = async (c: Pick<pg.ClientBase, 'query'>, table: string, sql: string, params: readonly unknown[]): Promise<number> => {
  const read = async () =>
    Number((await c.query<{ n: string }>('SELECT seq_tup_read + COALESCE(idx_tup_fetch, 0) AS n FROM pg_stat_xact_user_tables WHERE relname = $1', [table])).rows[0]!.n);
  await c.query('BEGIN');
  try {
    const before = await read();
    await c.query(sql, [...params]);
    return (await read()) - before;
  } finally {
    await c.query('ROLLBACK');
  }
};

/** Counts the calls of `names` on `proto` (every instance's, as they go through the prototype) until `stop`. */
const countCalls = <K extends string>(proto: object, names: readonly K[]) => {
  const methods = proto as Record<K, (...a: unknown[]) => unknown>;
  const originals = Object.fromEntries(names.map((name) => [name, methods[name]])) as Record<K, (...a: unknown[]) => unknown>;
  let n = 0;
  for (const name of names)
    methods[name] = function (this: unknown, ...args: unknown[]) {
      n++;
      return originals[name].apply(this, args);
    };
  return { count: () => n, stop: () => void Object.assign(methods, originals) };
};

/**
 * How many answers PostgreSQL is asked for, each a ReadyForQuery after which it flushes its socket: one per Sync
 * of the extended protocol, one per simple-protocol query.
 */
export const countSyncs = () => countCalls(pg.Connection.prototype, ['sync', 'query']);

/** How many times any socket hands bytes to the kernel (`_write` or `_writev`, once per flush) until `stop`. */
export const countSocketWrites = () => countCalls(net.Socket.prototype, ['_write', '_writev']);

/** One connection through a `relayTo` relay: once `silent`, nothing more passes, in either direction. */
export interface RelayedConnection {
  silent: boolean;
  /** Set by the test; what `onServerData` makes of it is the test's own. */
  armed: boolean;
}

/**
 * A TCP relay to the database at `dbUrl`, and the URL that connects through it. Each connection made through it is
 * in `connections`; the test can silence one, as a peer gone without a FIN does (a failover, a lost NAT entry): the
 * driver then hears nothing, ever. `onServerData` sees each chunk the server sends first, and may pass on part of
 * it itself and answer `true` (the relay then passes on nothing of it).
 */
export const relayTo = async (
  dbUrl: string,
  onServerData?: (chunk: Buffer, connection: RelayedConnection, toClient: (b: Buffer) => void) => boolean,
  /** Sees each chunk the client sends, and answers what to pass on instead (the same chunk, or another). */
  onClientData?: (chunk: Buffer, connection: RelayedConnection) => Buffer,
): Promise<{ url: string; connections: RelayedConnection[]; close: () => Promise<void> }> => {
  const target = new URL(dbUrl);
  const connections: RelayedConnection[] = [];
  const relay = net.createServer((client) => {
    const state: RelayedConnection = { silent: false, armed: false };
    connections.push(state);
    const server = net.connect(Number(target.port || 5432), target.hostname);
    client.on('data', (d: Buffer) => void (state.silent || server.write(onClientData?.(d, state) ?? d)));
    server.on('data', (d: Buffer) => {
      if (state.silent || onServerData?.(d, state, (b) => client.write(b)) === true) return;
      client.write(d);
    });
    for (const [s, other] of [[client, server], [server, client]] as const) {
      s.on('error', () => undefined);
      s.on('close', () => other.destroy());
    }
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const url = new URL(dbUrl);
  url.hostname = '127.0.0.1';
  url.port = String((relay.address() as net.AddressInfo).port);
  return { url: url.toString(), connections, close: () => new Promise<void>((r) => relay.close(() => r())) };
};
