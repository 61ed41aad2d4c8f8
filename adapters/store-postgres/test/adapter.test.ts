import type { Principal, SignatureRequest, StoreError, Stores } from '@esig/core';
import { createSignatureRequest, execute } from '@esig/core';
import {
  TENANT_A,
  at,
  createManualClock,
  createSequentialIds,
  fails,
  makeDocument,
  makeEvent,
  makeAttempt,
  makeIdempotencyRecord,
  makeDelivery,
  makeJob,
  makeLogEntry,
  makeOrg,
  makeSignatureRequest,
  makeWebhookEndpoint,
  ok,
  tagOf,
} from '@esig/testkit';
import * as E from 'fp-ts/lib/Either.js';
import pg from 'pg';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { PostgresStore, PostgresStoreOptions } from '../src/index.js';
import { LATEST_SCHEMA_VERSION, RowDecodeError, SchemaTooNewError, openPostgresStore } from '../src/index.js';
import { loadMigrations, migrate } from '../src/migrations.js';
import type { Conn } from '../src/connection.js';
import { queryConfig } from '../src/connection.js';
import { READ_SLICE_BYTES, pgDocumentContents } from '../src/document-contents.js';
import type { TestDatabase } from './pg.js';
import { available, countSocketWrites, countSyncs, createTestDatabase, emptyAllTables } from './pg.js';

const pause = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Connections to `db` other than the asking one: what a closed store must leave behind is none. */
const connectionsTo = (db: TestDatabase) =>
  db.raw(async (c) => (await c.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [db.name])).rows[0]!.n);

/**
 * Every statement handed to a driver client until `stop`: its text, how many of the client's statements were
 * on the wire once it was handed over (itself included), and how many waited in the driver's own queue.
 */
const watchStatements = () => {
  interface Internals {
    _queryQueue?: unknown[];
    _sentQueryQueue?: unknown[];
    _activeQuery?: unknown;
  }
  const original = pg.Client.prototype.query;
  // `batch`: for the statements of one batch (statement-batch.ts), which query of the transaction carried them.
  const seen: { text: string; onWire: number; queued: number; batch: number | null }[] = [];
  let queries = 0;
  pg.Client.prototype.query = function (this: Internals, ...args: unknown[]) {
    const result = (original as (...a: unknown[]) => unknown).apply(this, args);
    const config = args[0] as string | { text: string; members?: readonly { stmt: string | { text: string } }[] };
    const at = { onWire: (this._sentQueryQueue?.length ?? 0) + (this._activeQuery ? 1 : 0), queued: this._queryQueue?.length ?? 0 };
    const batch = queries++;
    // The Parse of every prepared statement that opens each connection (parseOnConnect) is none of a transaction's.
    if (typeof config !== 'string' && config.text === 'esig prepared statements') return result;
    if (typeof config !== 'string' && config.members !== undefined)
      for (const { stmt } of config.members) seen.push({ text: typeof stmt === 'string' ? stmt : stmt.text, ...at, batch });
    else seen.push({ text: typeof config === 'string' ? config : config.text, ...at, batch: null });
    return result;
  } as typeof original;
  return { seen, stop: () => void (pg.Client.prototype.query = original) };
};

describe.skipIf(!available)('postgres adapter', () => {
  const databases: TestDatabase[] = [];
  const stores: PostgresStore[] = [];
  const freshDb = async () => {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  };
  const open = async (opts: PostgresStoreOptions) => {
    const s = await openPostgresStore(opts);
    stores.push(s);
    return s;
  };
  afterEach(async () => {
    await Promise.all(stores.splice(0).map((s) => s.close().catch(() => undefined)));
  });
  afterAll(async () => {
    for (const db of databases) await db.drop();
  });

  describe('migrations', () => {
    it('the migrations folder runs 1..LATEST_SCHEMA_VERSION', () => {
      expect(loadMigrations().map((m) => m.version)).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    });

    it('a migration that builds or drops an index of a live table first limits its wait for a lock (since 15)', () => {
      // Such a migration holds the table; without a limit it waits behind every open transaction on it while every
      // statement of the service on it waits behind the migration (the test of migration 15 below shows it).
      const indexing = loadMigrations().filter((m) => m.version >= 15 && /\b(CREATE|DROP) INDEX\b|\bALTER TABLE\b/i.test(m.sql));
      expect(indexing.map((m) => m.version)).toEqual(expect.arrayContaining([15, 16, 17, 18]));
      for (const m of indexing) {
        const firstStatement = m.sql.replace(/^\s*(--[^\n]*\n\s*)*/, '');
        expect(firstStatement, `migration ${m.version}`).toMatch(/^SET LOCAL lock_timeout = '\d+s';/);
      }
    });

    it('a new database is migrated on open, and migrating again applies nothing', async () => {
      const s = await open({ url: (await freshDb()).url });
      expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect(await s.migrate()).toBe(0);
      expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    });

    it('on a schema older than the code (migrate: false) the version is read, statements fail rather than run, and migrate() mends it', async () => {
      const db = await freshDb();
      await (await openPostgresStore({ url: db.url })).close();
      // Version 11: the per-call marker that prepared statements name (migration 0012) is missing.
      await db.raw((c) => c.query('DROP FUNCTION esig_planned_per_call(integer); DELETE FROM schema_migrations WHERE version >= 12'));
      const s = await open({ url: db.url, migrate: false });
      // On a connection of its own: the pool's connections cannot parse the prepared statements (parseOnConnect).
      expect(await s.schemaVersion()).toBe(11);
      expect(tagOf(await fails(s.stores.documents.findById(TENANT_A, 'doc_missing')))).toBe('StoreFailure');
      // migrate() answers how many migrations it applied: 0012 and the ones after it.
      expect(await s.migrate()).toBe(LATEST_SCHEMA_VERSION - 11);
      expect(await ok(s.stores.documents.findById(TENANT_A, 'doc_missing'))).toBeNull();
    });

    it('migration 15 gives up a lock it cannot get, rather than hold the service behind it, and runs again', async () => {
      const db = await freshDb();
      await (await openPostgresStore({ url: db.url })).close();
      // Back to version 14: the page indexes with id in the column's collation.
      await db.raw((c) =>
        c.query(`DROP INDEX documents_page; DROP INDEX documents_page_by_status;
                 CREATE INDEX documents_page ON documents (org_id, mode, created_at, id);
                 CREATE INDEX documents_page_by_status ON documents (org_id, mode, status, created_at, id);
                 DELETE FROM schema_migrations WHERE version >= 15`),
      );
      const connect = async () => {
        const c = new pg.Client({ connectionString: db.url });
        await c.connect();
        return c;
      };
      const [reader, app, watcher] = [await connect(), await connect(), await connect()];
      try {
        // A report's transaction has read documents and is still open: dropping an index of it must wait.
        await reader.query('BEGIN');
        await reader.query('SELECT count(*) FROM documents');
        const s = await open({ url: db.url, migrate: false });
        let settled = false;
        const migrating = s.migrate().then(
          () => null,
          (e: Error) => e,
        );
        void migrating.finally(() => (settled = true));
        // Once the migration waits for its lock, a statement of the service on documents (the pool's lock timeout,
        // 5 s) queues behind it: without a lock timeout of the migration's own it failed there.
        const waiting = async () =>
          (await watcher.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted AND relation = 'documents'::regclass")).rows[0]!.n;
        while (!settled && (await waiting()) === 0) await new Promise((r) => setTimeout(r, 10));
        expect(settled, 'the migration gave up before its wait was seen').toBe(false);
        await app.query("SET lock_timeout = '5s'");
        const lookup = await app.query("SELECT id FROM documents WHERE id = 'doc_x'").then(
          () => 'answered',
          (e: Error) => e.message,
        );
        const failed = await migrating;
        expect(lookup).toBe('answered');
        expect(failed?.message).toMatch(/^migration 15 \(documents_pages_posix\) gave up waiting for a lock/);
        expect(await s.schemaVersion()).toBe(14);
        await reader.query('COMMIT');
        // Migration 15 and those after it.
        expect(await s.migrate()).toBe(LATEST_SCHEMA_VERSION - 14);
        expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      } finally {
        for (const c of [reader, app, watcher]) await c.end().catch(() => undefined);
      }
    }, 60_000);

    it('with migrate: false nothing is applied until migrate() is called', async () => {
      const s = await open({ url: (await freshDb()).url, migrate: false });
      expect(await s.schemaVersion()).toBe(0);
      expect(await s.migrate()).toBe(LATEST_SCHEMA_VERSION);
      expect(await s.migrate()).toBe(0);
    });

    it('processes migrating an empty database at the same moment apply each migration exactly once', async () => {
      const db = await freshDb();
      const racers = await Promise.all(Array.from({ length: 4 }, () => open({ url: db.url, migrate: false })));
      const applied = await Promise.all(racers.map((s) => s.migrate()));
      expect([...applied].sort()).toEqual([0, 0, 0, LATEST_SCHEMA_VERSION]);

      // The same through openPostgresStore itself, on another empty database.
      const db2 = await freshDb();
      const opened = await Promise.all(Array.from({ length: 4 }, () => open({ url: db2.url })));
      for (const s of opened) expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      const rows = await db2.raw((c) => c.query<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'));
      expect(rows.rows.map((r) => r.version)).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    });

    it('a failing migration leaves the previous version intact and nothing of itself', async () => {
      const db = await freshDb();
      const broken = { version: LATEST_SCHEMA_VERSION + 1, name: 'broken', sql: 'CREATE TABLE half_done (id int); SELECT 1 / 0;' };
      const thrown = await db.raw((c) => migrate(c, [...loadMigrations(), broken]).then(() => null, (e: unknown) => e));
      expect(String(thrown)).toMatch(/division by zero/);
      const s = await open({ url: db.url, migrate: false });
      expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect((await db.raw((c) => c.query("SELECT to_regclass('half_done') AS t"))).rows[0].t).toBeNull();
      // The advisory lock was released: another migration can run at once.
      expect(await s.migrate()).toBe(0);
    });

    it('a migration ended by a deadlock says to run it again, as one that gave up its lock wait', async () => {
      // The deadlock itself (a service transaction that locked a request and then writes it, waiting for migration 17's
      // index build while the migration's DROP INDEX waits for it) was reproduced by a review; PostgreSQL ends one of
      // the two with 40P01, which is what this migration raises.
      const db = await freshDb();
      const deadlocked = {
        version: LATEST_SCHEMA_VERSION + 1,
        name: 'deadlocked',
        sql: "CREATE TABLE half_done (id int); DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' USING ERRCODE = '40P01'; END $$;",
      };
      const thrown = await db.raw((c) => migrate(c, [...loadMigrations(), deadlocked]).then(() => null, (e: unknown) => e));
      expect(String(thrown)).toMatch(
        new RegExp(`migration ${LATEST_SCHEMA_VERSION + 1} \\(deadlocked\\) gave up waiting for a lock that open transactions hold \\(a deadlock with one of them\\); nothing of it was applied: run it again`),
      );
      expect((await db.raw((c) => c.query("SELECT to_regclass('half_done') AS t"))).rows[0].t).toBeNull();
    });

    it('upgrades a version 4 database: documents uploaded before page sizes were recorded read with pageSizes null', async () => {
      const db = await freshDb();
      await db.raw((c) => migrate(c, loadMigrations().slice(0, 4)));
      const doc = makeDocument(TENANT_A, { pageSizes: null });
      await db.raw((c) =>
        c.query(
          'INSERT INTO documents (id, org_id, mode, name, status, page_count, size_bytes, sha256, signature_request_id, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)',
          [doc.id, doc.orgId, doc.mode, doc.name, doc.status, doc.pageCount, doc.sizeBytes, doc.sha256, doc.signatureRequestId, doc.createdAt],
        ),
      );
      const s = await open({ url: db.url });
      expect(await s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('refuses to open a database migrated by newer code, and leaves no connection behind', async () => {
      const db = await freshDb();
      await (await openPostgresStore({ url: db.url })).close();
      await db.raw((c) => c.query("INSERT INTO schema_migrations (version, name) VALUES ($1, 'future')", [LATEST_SCHEMA_VERSION + 1]));
      for (const migrateOnOpen of [true, false]) {
        const thrown = await openPostgresStore({ url: db.url, migrate: migrateOnOpen }).then(
          (s) => s.close().then(() => null),
          (e: unknown) => e,
        );
        expect(thrown).toBeInstanceOf(SchemaTooNewError);
        expect(thrown).toMatchObject({ databaseVersion: LATEST_SCHEMA_VERSION + 1, codeVersion: LATEST_SCHEMA_VERSION });
      }
      expect(await connectionsTo(db)).toBe(0);
    });
  });

  describe('transactions', () => {
    let db: TestDatabase;
    let s: PostgresStore;
    beforeAll(async () => {
      db = await freshDb();
      await (await openPostgresStore({ url: db.url })).close();
    });
    const fresh = async (opts: Partial<PostgresStoreOptions> = {}) => {
      s = await open({ url: db.url, migrate: false, ...opts });
      await emptyAllTables(s.pool);
      return s;
    };

    /**
     * A transaction that updates `req` (version 1) to version 2, titled 'first', and holds its row lock until
     * `release`; resolves once the lock is held. `holder` is that transaction's outcome.
     */
    const holdRowLock = async (req: SignatureRequest) => {
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      let locked!: () => void;
      const isLocked = new Promise<void>((r) => (locked = r));
      const holder = s.uow.transaction((tx) =>
        pipe(
          tx.signatureRequests.update({ ...req, title: 'first', version: 2 }),
          TE.chainFirstTaskK(() => () => {
            locked();
            return held;
          }),
        ),
      )();
      await isLocked;
      return { release, holder };
    };

    it('with checkNesting, a nested transaction, or a top-level write inside a transaction, fails at once; top-level reads work', async () => {
      await fresh({ checkNesting: true });
      const doc = makeDocument(TENANT_A);
      expect(tagOf(await fails(s.uow.transaction(() => s.uow.transaction((tx) => tx.documents.insert(doc)))))).toBe('StoreFailure');
      expect(tagOf(await fails(s.uow.transaction(() => s.stores.documents.insert(doc))))).toBe('StoreFailure');
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
      expect(await ok(s.uow.transaction(() => s.stores.documents.findById(TENANT_A, doc.id)))).toBeNull();
    });

    it('without checkNesting (the default), a top-level write inside a transaction is not refused: it commits on its own', async () => {
      await fresh();
      const doc = makeDocument(TENANT_A);
      const r = await fails(s.uow.transaction(() => pipe(s.stores.documents.insert(doc), TE.chainW(() => TE.left('roll back' as const)))));
      expect(r).toBe('roll back');
      // Not part of the transaction that rolled back: what checkNesting exists to catch.
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('with checkNesting, findByIdForUpdate through the top-level stores inside a transaction fails at once, as a write does, instead of waiting on its lock', async () => {
      await fresh({ checkNesting: true });
      const e = makeWebhookEndpoint(TENANT_A);
      await ok(s.stores.webhookEndpoints.insert(e));
      const r = await fails(
        s.uow.transaction((tx) =>
          pipe(
            tx.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id),
            TE.chain(() => s.stores.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id)),
          ),
        ),
      );
      expect(tagOf(r)).toBe('StoreFailure');
      expect(await ok(s.stores.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id))).toEqual(e);
    });

    it("a transaction's stores fail once it has ended instead of running on a connection lent to someone else", async () => {
      await fresh();
      let leaked: Stores | undefined;
      await ok(s.uow.transaction((tx) => TE.fromIO(() => void (leaked = tx))));
      const doc = makeDocument(TENANT_A);
      expect(tagOf(await fails(leaked!.documents.insert(doc)))).toBe('StoreFailure');
      expect(tagOf(await fails(leaked!.documents.findById(TENANT_A, doc.id)))).toBe('StoreFailure');
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
    });

    it('statements a transaction starts at once run one after another on its connection, each answered, without the driver queueing them', async () => {
      await fresh();
      const docs = Array.from({ length: 8 }, () => makeDocument(TENANT_A));
      const calls = watchStatements();
      try {
        const found = await ok(
          s.uow.transaction((tx) =>
            pipe(
              // Inserts and reads started together (ApplyPar): eight writes, then eight reads, all at once.
              TE.sequenceArray(docs.map((d) => tx.documents.insert(d))),
              TE.chain(() => TE.sequenceArray(docs.map((d) => tx.documents.findById(TENANT_A, d.id)))),
            ),
          ),
        );
        expect(found.map((d) => d?.id)).toEqual(docs.map((d) => d.id));
      } finally {
        calls.stop();
      }
      // BEGIN, 16 statements, COMMIT: all seen by the wrapper, none queued in the driver, and each alone on
      // the wire when sent. The first insert, a write, waited for BEGIN's answer.
      expect(calls.seen).toHaveLength(18);
      expect(calls.seen.map((c) => c.queued)).toEqual(Array(18).fill(0));
      expect(calls.seen.map((c) => c.onWire)).toEqual(Array(18).fill(1));
      for (const d of docs) expect(await ok(s.stores.documents.findById(TENANT_A, d.id))).not.toBeNull();
    });

    it("a transaction's first read goes out behind its BEGIN without waiting for BEGIN's answer, in one write to the socket; what follows waits its turn", async () => {
      await fresh();
      const doc = makeDocument(TENANT_A);
      const calls = watchStatements();
      const flushes = countSocketWrites();
      try {
        await ok(s.uow.transaction((tx) => pipe(tx.documents.findById(TENANT_A, doc.id), TE.chain(() => tx.documents.insert(doc)))));
      } finally {
        calls.stop();
        flushes.stop();
      }
      expect(calls.seen.map((c) => c.text.split(' ')[0])).toEqual(['BEGIN', 'SELECT', 'INSERT', 'COMMIT']); // the by-id read
      // Sent at once, not queued in the driver: BEGIN and the read were both on the wire, one round trip.
      expect(calls.seen.map((c) => c.queued)).toEqual([0, 0, 0, 0]);
      expect(calls.seen.map((c) => c.onWire)).toEqual([1, 2, 1, 1]);
      // BEGIN and the read in one system call, then the insert, then COMMIT: three writes for four statements.
      expect(flushes.count()).toBe(3);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('a BEGIN that fails fails the transaction; a read behind it answers with that failure, and no write is sent behind it', async () => {
      await fresh();
      // A statement that fails outside any transaction stands in for the BEGIN: the session is then where a
      // failed BEGIN leaves it, so anything sent behind it would run, and commit, on its own.
      const original = pg.Client.prototype.query;
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        if (typeof args[0] === 'string' && args[0].startsWith('BEGIN')) args[0] = 'SELECT 1/0';
        return (original as (...a: unknown[]) => unknown).apply(this, args);
      } as typeof original;
      const writeFirst = makeDocument(TENANT_A);
      const readFirst = makeDocument(TENANT_A);
      const calls = watchStatements();
      try {
        const a = await fails(s.uow.transaction((tx) => tx.documents.insert(writeFirst)));
        let readAnswer: unknown = 'not run';
        const b = await fails(
          s.uow.transaction((tx) =>
            pipe(
              tx.documents.findById(TENANT_A, readFirst.id),
              TE.mapLeft((e) => ((readAnswer = e), e)),
              TE.chain(() => tx.documents.insert(readFirst)),
            ),
          ),
        );
        for (const e of [a, b]) {
          expect(tagOf(e)).toBe('StoreFailure');
          expect(String((e as { cause: unknown }).cause)).toMatch(/division by zero/);
        }
        expect(tagOf(readAnswer)).toBe('StoreFailure');
        // Reads and a write started together: the first read goes out behind the failing BEGIN; the write, and
        // the reads queued behind it, are never sent.
        const c = await fails(
          s.uow.transaction((tx) =>
            TE.sequenceArray([
              tx.documents.findById(TENANT_A, readFirst.id),
              pipe(tx.documents.insert(readFirst), TE.map(() => null)),
              tx.documents.findById(TENANT_A, readFirst.id),
              tx.documents.findById(TENANT_A, readFirst.id),
            ]),
          ),
        );
        expect(String((c as { cause: unknown }).cause)).toMatch(/division by zero/);
      } finally {
        calls.stop();
        pg.Client.prototype.query = original;
      }
      expect(await ok(s.stores.documents.findById(TENANT_A, writeFirst.id))).toBeNull();
      expect(await ok(s.stores.documents.findById(TENANT_A, readFirst.id))).toBeNull();
      // Each transaction's BEGIN, and the first read of the two that start with one: no write, no later read.
      expect(calls.seen.map((c) => c.text.split(' ')[0])).toEqual(['BEGIN', 'BEGIN', 'SELECT', 'BEGIN', 'SELECT']);
      // The connections were closed, not lent out again: the next transaction works.
      await ok(s.uow.transaction((tx) => tx.documents.insert(writeFirst)));
      expect(await ok(s.stores.documents.findById(TENANT_A, writeFirst.id))).toEqual(writeFirst);
    });

    it('a connection that dies while a transaction holds it fails that transaction, and does not take the process down', async () => {
      await fresh();
      const doc = makeDocument(TENANT_A);
      // Between two of the transaction's statements, its backend is terminated (a restart, a failover, an
      // operator): the driver reports it as an 'error' event on the checked-out client.
      // The client the transaction holds: its 'end' comes right after that 'error' (listening to 'end' leaves
      // the 'error' to the store's own listener), so the next statement is sent only once the driver knows.
      let held: pg.PoolClient | undefined;
      const onAcquire = (c: pg.PoolClient) => void (held ??= c);
      s.pool.on('acquire', onAcquire);
      let r: unknown;
      try {
        r = await fails(
          s.uow.transaction((tx) =>
            pipe(
              tx.documents.findById(TENANT_A, doc.id),
              TE.chainFirst(() =>
                TE.fromTask(async () => {
                  const ended = new Promise<void>((done) => held!.once('end', () => done()));
                  await db.raw((c) =>
                    c.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'esig' AND state = 'idle in transaction'"),
                  );
                  await ended;
                }),
              ),
              TE.chain(() => tx.documents.insert(doc)),
            ),
          ),
        );
      } finally {
        s.pool.off('acquire', onAcquire);
      }
      expect(tagOf(r)).toBe('StoreFailure');
      // Nothing committed, and the store goes on with a fresh connection.
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
      await ok(s.uow.transaction((tx) => tx.documents.insert(doc)));
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('work that ignores a failed statement and returns Right commits nothing and fails', async () => {
      await fresh();
      const doc = makeDocument(TENANT_A);
      const e = await fails(
        s.uow.transaction((tx) =>
          pipe(
            tx.documents.insert(doc),
            // A cursor time PostgreSQL cannot parse: the statement fails and aborts the transaction.
            TE.chain(() => tx.documents.list(TENANT_A, { limit: 5, order: 'asc', after: { createdAt: 'not a time', id: 'doc_x' }, filter: {} })),
            TE.map(() => undefined),
            TE.orElse((): TE.TaskEither<StoreError, void> => TE.right(undefined)),
          ),
        ),
      );
      expect(tagOf(e)).toBe('StoreFailure');
      expect(String((e as { cause: unknown }).cause)).toMatch(/rolled it back/);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
    });

    it('conflicts the ports tolerate keep the transaction usable, and what follows them commits', async () => {
      await fresh();
      const event = makeEvent(TENANT_A);
      const org = makeOrg();
      const idem = makeIdempotencyRecord(TENANT_A);
      const job = makeJob(TENANT_A, { dedupeKey: 'once' });
      const taken = makeDocument(TENANT_A, { signatureRequestId: 'req_1' });
      const after = makeDocument(TENANT_A);
      await ok(s.stores.documents.insert(taken));
      const swallow = <A>(te: TE.TaskEither<StoreError, A>): TE.TaskEither<StoreError, string | undefined> =>
        pipe(
          te,
          TE.map(() => 'ok'),
          TE.orElse((err) => TE.right(tagOf(err))),
        );
      const outcomes = await ok(
        s.uow.transaction((tx) =>
          pipe(
            TE.Do,
            TE.bind('event', () => pipe(tx.events.append(event), TE.chain(() => swallow(tx.events.append(event))))),
            TE.bind('org', () => pipe(tx.orgs.insert(org), TE.chain(() => swallow(tx.orgs.insert(makeOrg({ name: org.name })))))),
            TE.bind('idem', () => pipe(tx.idempotency.insertIfAbsent(idem), TE.chain(() => tx.idempotency.insertIfAbsent(idem)))),
            TE.bind('job', () => pipe(tx.jobs.enqueue(job), TE.chain(() => tx.jobs.enqueue(makeJob(TENANT_A, { dedupeKey: 'once' }))))),
            TE.bind('attach', () => swallow(tx.documents.attachToRequest(TENANT_A, [taken.id], 'req_2'))),
            TE.bind('stale', () => swallow(tx.signatureRequests.update(makeSignatureRequest(TENANT_A, { version: 2 })))),
            TE.chainFirst(() => tx.documents.insert(after)),
          ),
        ),
      );
      expect(outcomes).toEqual({
        event: 'ConcurrentModification',
        org: 'ConcurrentModification',
        idem: false,
        job: false,
        attach: 'ConcurrentModification',
        stale: 'ConcurrentModification',
      });
      expect(await ok(s.stores.documents.findById(TENANT_A, after.id))).toEqual(after);
      expect(await ok(s.stores.orgs.findByName(org.name))).toEqual(org);
    });

    describe('with deferWrites (how commands run)', () => {
      // A read, an insert and an update, as a create-request: the writes' answers are not waited for.
      const readInsertUpdate = (doc: ReturnType<typeof makeDocument>) => (tx: Stores) =>
        pipe(
          tx.documents.findById(TENANT_A, doc.id),
          TE.chain(() => tx.documents.insert(doc)),
          TE.chain(() => tx.documents.setStatusForRequest(TENANT_A, { id: 'req_none', documentIds: ['doc_none'] }, 'UPLOADED')),
        );

      it('consecutive writes and the COMMIT after them go out together without waiting for each other: one round trip', async () => {
        await fresh();
        const run = async (deferWrites: boolean) => {
          const doc = makeDocument(TENANT_A);
          const calls = watchStatements();
          const flushes = countSocketWrites();
          const syncs = countSyncs();
          try {
            await ok(s.uow.transaction(readInsertUpdate(doc), { deferWrites }));
          } finally {
            calls.stop();
            flushes.stop();
            syncs.stop();
          }
          expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
          return {
            texts: calls.seen.map((c) => c.text.split(/\s/)[0]),
            onWire: calls.seen.map((c) => c.onWire),
            queued: calls.seen.map((c) => c.queued),
            batch: calls.seen.map((c) => c.batch),
            flushes: flushes.count(),
            answers: syncs.count(),
          };
        };
        const waited = await run(false);
        const deferred = await run(true);
        expect(waited.texts).toEqual(['BEGIN', 'SELECT', 'INSERT', 'UPDATE', 'COMMIT']);
        expect(deferred.texts).toEqual(waited.texts);
        // Each write alone on the wire when it is waited for; when they are not, the two writes and the COMMIT
        // are one query of the driver's, one batch (statement-batch.ts). The COMMIT is a batch even alone (so a
        // connection lost after its answer is known to have committed: commit-outcome.test.ts).
        expect(waited.onWire).toEqual([1, 2, 1, 1, 1]);
        expect(waited.batch).toEqual([null, null, null, null, 4]);
        expect(deferred.onWire).toEqual([1, 2, 1, 1, 1]);
        expect(deferred.batch).toEqual([null, null, 2, 2, 2]);
        expect(deferred.queued).toEqual([0, 0, 0, 0, 0]);
        // BEGIN with the read, then the two writes and the COMMIT in one system call: two writes to the socket.
        expect(waited.flushes).toBe(4);
        expect(deferred.flushes).toBe(2);
        // Answers (ReadyForQuery, each a flush of PostgreSQL's socket): one per statement when waited for; the batch
        // has one Sync for the writes and the COMMIT.
        expect(waited.answers).toBe(5);
        expect(deferred.answers).toBe(3);
      });

      it("a deferred write's prepared statements are parsed when its connection opens: the connection's first transaction is one batch too", async () => {
        // One connection, which has run nothing but the plain statements emptying the tables.
        await fresh({ poolSize: 1 });
        const run = async () => {
          const req = makeSignatureRequest(TENANT_A, { version: 1 });
          const calls = watchStatements();
          const syncs = countSyncs();
          try {
            await ok(
              s.uow.transaction(
                (tx) => pipe(tx.signatureRequests.insert(req), TE.chain(() => tx.signatureRequests.update({ ...req, title: 'changed', version: 2 }))),
                { deferWrites: true },
              ),
            );
          } finally {
            calls.stop();
            syncs.stop();
          }
          expect(await ok(s.stores.signatureRequests.findById(TENANT_A, req.id))).toEqual({ ...req, title: 'changed', version: 2 });
          return { batch: calls.seen.map((c) => c.batch !== null), answers: syncs.count() };
        };
        // The insert and the update were never run on it, but were parsed when it opened (parseOnConnect): BEGIN,
        // the insert, the update and the COMMIT go as one batch, answered once.
        expect(await run()).toEqual({ batch: [true, true, true, true], answers: 1 });
        // The pool lends the same connection again: the same.
        expect(await run()).toEqual({ batch: [true, true, true, true], answers: 1 });
      });

      it('a write that fails (a stale version) fails the transaction with its own error, though work went on; nothing commits', async () => {
        await fresh();
        const req = makeSignatureRequest(TENANT_A, { version: 1 });
        await ok(s.stores.signatureRequests.insert(req));
        const after = makeDocument(TENANT_A);
        let wentOn = false;
        const e = await fails(
          s.uow.transaction(
            (tx) =>
              pipe(
                // Version 3 over version 1: no row changes, which fails the statement (EW001), and PostgreSQL
                // refuses the insert behind it.
                tx.signatureRequests.update({ ...req, title: 'stale', version: 3 }),
                TE.chain(() => tx.documents.insert(after)),
                TE.map(() => void (wentOn = true)),
              ),
            { deferWrites: true },
          ),
        );
        expect(wentOn).toBe(true);
        expect(e).toMatchObject({ _tag: 'ConcurrentModification', resource: 'signature_request', id: req.id });
        expect(await ok(s.stores.documents.findById(TENANT_A, after.id))).toBeNull();
        expect((await ok(s.stores.signatureRequests.findById(TENANT_A, req.id)))?.title).toBe(req.title);
      });

      it('every write sent unanswered fails, where it should, with its own error, and nothing after it commits', async () => {
        await fresh();
        const req = makeSignatureRequest(TENANT_A, { version: 1 });
        const doc = makeDocument(TENANT_A);
        const taken = makeDocument(TENANT_A, { signatureRequestId: 'req_1' });
        const event = makeEvent(TENANT_A);
        await ok(s.stores.signatureRequests.insert(req));
        await ok(s.stores.documents.insert(doc));
        await ok(s.stores.documents.insert(taken));
        await ok(s.stores.events.append(event));
        const cases: Array<[string, (tx: Stores) => TE.TaskEither<StoreError, void>, string]> = [
          ['a request id taken', (tx) => tx.signatureRequests.insert(req), 'signature_request'],
          ['a stale request', (tx) => tx.signatureRequests.update({ ...req, version: 3 }), 'signature_request'],
          ['a document id taken', (tx) => tx.documents.insert(doc), 'document'],
          ['a document linked elsewhere', (tx) => tx.documents.attachToRequest(TENANT_A, [doc.id, taken.id], 'req_2'), 'document'],
          ['an event id taken', (tx) => tx.events.append(event), 'event'],
          ['an idempotency record gone', (tx) => tx.idempotency.complete(TENANT_A, 'never-claimed', { status: 200, body: '{}', headers: {} }, makeIdempotencyRecord(TENANT_A)), 'idempotency_key'],
        ];
        // A delivery's record and its job's completion, as a worker settles them.
        const endpoint = makeWebhookEndpoint(TENANT_A);
        const delivery = makeDelivery(TENANT_A, { endpointId: endpoint.id });
        const attempt = makeAttempt(TENANT_A, { deliveryId: delivery.id, endpointId: endpoint.id, eventId: delivery.eventId });
        const entry = makeLogEntry(TENANT_A);
        const job = makeJob(TENANT_A);
        await ok(s.stores.webhookEndpoints.insert(endpoint));
        await ok(s.stores.webhookDeliveries.insert(delivery));
        await ok(s.stores.webhookDeliveries.appendAttempt(attempt));
        await ok(s.stores.apiLog.append([entry]));
        await ok(s.stores.jobs.enqueue(job));
        expect(await ok(s.stores.jobs.claim([job.kind], 'holder', at(0), at(60), 1))).toHaveLength(1);
        cases.push(
          ['an attempt id taken', (tx) => tx.webhookDeliveries.appendAttempt(attempt), 'webhook_attempt'],
          ['a stale delivery', (tx) => tx.webhookDeliveries.update({ ...delivery, attempts: 1, version: 3 }), 'webhook_delivery'],
          ['an API log id taken', (tx) => tx.apiLog.append([entry]), 'api_log'],
          ['a job whose lease another worker holds', (tx) => tx.jobs.complete(job.id, 'not-the-holder'), 'job'],
        );
        for (const [what, failing, resource] of cases) {
          const after = makeDocument(TENANT_A);
          const e = await fails(s.uow.transaction((tx) => pipe(failing(tx), TE.chain(() => tx.documents.insert(after))), { deferWrites: true }));
          expect(e, what).toMatchObject({ _tag: 'ConcurrentModification', resource });
          expect(await ok(s.stores.documents.findById(TENANT_A, after.id)), what).toBeNull();
        }
        // The document linked elsewhere kept its request, and the other one stayed free: all or none.
        expect((await ok(s.stores.documents.findById(TENANT_A, doc.id)))?.signatureRequestId).toBeNull();
      });

      it("a delivery's record and its job's completion go out with the COMMIT, in one write to the socket", async () => {
        await fresh();
        const endpoint = makeWebhookEndpoint(TENANT_A, { consecutiveFinalFailures: 1, version: 2 });
        await ok(s.stores.webhookEndpoints.insert(endpoint));
        const settle = async (deferWrites: boolean) => {
          const delivery = makeDelivery(TENANT_A, { endpointId: endpoint.id });
          const job = makeJob(TENANT_A);
          await ok(s.stores.webhookDeliveries.insert(delivery));
          await ok(s.stores.jobs.enqueue(job));
          expect(await ok(s.stores.jobs.claim([job.kind], 'w1', at(0), at(60), 1))).toHaveLength(1);
          const flushes = countSocketWrites();
          const syncs = countSyncs();
          try {
            await ok(
              s.uow.transaction(
                (tx) =>
                  pipe(
                    tx.webhookDeliveries.appendAttempt(makeAttempt(TENANT_A, { deliveryId: delivery.id, endpointId: endpoint.id, eventId: delivery.eventId })),
                    TE.chain(() => tx.apiLog.append([makeLogEntry(TENANT_A)])),
                    TE.chain(() => tx.webhookDeliveries.update({ ...delivery, status: 'succeeded', attempts: 1, version: 2 })),
                    TE.chain(() => tx.webhookEndpoints.clearFailures(TENANT_A, endpoint.id, at(5))),
                    TE.chain(() => tx.jobs.complete(job.id, 'w1')),
                  ),
                { deferWrites },
              ),
            );
          } finally {
            flushes.stop();
            syncs.stop();
          }
          expect((await ok(s.stores.webhookDeliveries.findById(TENANT_A, delivery.id)))?.status).toBe('succeeded');
          expect(await ok(s.stores.jobs.list({ ids: [job.id], limit: 1 }))).toEqual([]);
          return { flushes: flushes.count(), answers: syncs.count() };
        };
        // BEGIN, each of the five writes, the COMMIT; deferred: BEGIN, the writes and the COMMIT in one batch, answered
        // once (the first statement is a deferred write, so BEGIN heads the batch rather than going alone before it).
        expect(await settle(false)).toEqual({ flushes: 7, answers: 7 });
        expect(await settle(true)).toEqual({ flushes: 1, answers: 1 });
        expect((await ok(s.stores.webhookEndpoints.findById(TENANT_A, endpoint.id)))?.consecutiveFinalFailures).toBe(0);
      });

      it("a statement after a write PostgreSQL refused fails with that write's error, not with 'transaction aborted'", async () => {
        await fresh();
        const req = makeSignatureRequest(TENANT_A, { version: 1 });
        await ok(s.stores.signatureRequests.insert(req));
        const { release, holder } = await holdRowLock(req);
        let readFailedWith: StoreError | null = null;
        const e = await fails(
          s.uow.transaction(
            (tx) =>
              pipe(
                // Waits for the holder's row lock past the lock timeout: PostgreSQL fails it (55P03) and
                // refuses the read sent behind it (25P02).
                tx.signatureRequests.update({ ...req, title: 'second', version: 2 }),
                TE.chain(() => tx.documents.findById(TENANT_A, 'doc_none')),
                TE.mapLeft((err) => (readFailedWith = err)),
              ),
            { deferWrites: true, lockTimeoutMs: 200 },
          ),
        );
        release();
        expect(E.isRight(await holder)).toBe(true);
        expect(readFailedWith).toMatchObject({ _tag: 'ConcurrentModification', resource: 'signature_request', id: req.id });
        expect(e).toMatchObject({ _tag: 'ConcurrentModification', resource: 'signature_request', id: req.id });
        expect((await ok(s.stores.signatureRequests.findById(TENANT_A, req.id)))?.title).toBe('first');
      });

      it('work that tolerates a write failure must not ask for it: without deferWrites the failure is seen at the write, and what follows commits', async () => {
        await fresh();
        const taken = makeDocument(TENANT_A, { signatureRequestId: 'req_1' });
        const after = makeDocument(TENANT_A);
        await ok(s.stores.documents.insert(taken));
        const attach = (deferWrites: boolean) =>
          s.uow.transaction(
            (tx) =>
              pipe(
                tx.documents.attachToRequest(TENANT_A, [taken.id], 'req_2'),
                TE.map(() => 'attached'),
                TE.orElse((err) => TE.right(tagOf(err))),
                TE.chainFirst(() => tx.documents.insert(deferWrites ? makeDocument(TENANT_A) : after)),
              ),
            { deferWrites },
          )();
        expect(await attach(false)).toEqual(E.right('ConcurrentModification'));
        expect(await ok(s.stores.documents.findById(TENANT_A, after.id))).toEqual(after);
        // Deferred, the attach answers at once and its failure ends the transaction: the promise it breaks.
        const e = await attach(true);
        expect(E.isLeft(e) && tagOf(e.left)).toBe('ConcurrentModification');
      });
    });

    it('a unique violation that is not tolerated (a reused job id) is ConcurrentModification', async () => {
      await fresh();
      const job = makeJob(TENANT_A);
      await ok(s.stores.jobs.enqueue(job));
      expect(tagOf(await fails(s.stores.jobs.enqueue({ ...job, dedupeKey: 'other' })))).toBe('ConcurrentModification');
    });

    it('optimistic concurrency holds across processes: concurrent increments from two pools never lose one', async () => {
      await fresh();
      const other = await open({ url: db.url, migrate: false });
      const req = makeSignatureRequest(TENANT_A, { message: '0', version: 1 });
      await ok(s.stores.signatureRequests.insert(req));
      const increment = (store: PostgresStore) =>
        store.uow.transaction((tx) =>
          pipe(
            tx.signatureRequests.findById(TENANT_A, req.id),
            TE.chainFirstTaskK(() => () => pause(1)),
            TE.chainW((r): TE.TaskEither<StoreError | 'vanished', void> =>
              r === null ? TE.left('vanished') : tx.signatureRequests.update({ ...r, message: String(Number(r.message) + 1), version: r.version + 1 }),
            ),
          ),
        );
      let conflicts = 0;
      const worker = async (store: PostgresStore) => {
        for (let attempt = 0; attempt < 100; attempt++) {
          const r = await increment(store)();
          if (E.isRight(r)) return;
          expect(tagOf(r.left)).toBe('ConcurrentModification');
          conflicts++;
        }
        throw new Error('an increment never got through');
      };
      const N = 12;
      await Promise.all(Array.from({ length: N }, (_, i) => worker(i % 2 === 0 ? s : other)));
      const final = await ok(s.stores.signatureRequests.findById(TENANT_A, req.id));
      expect(final).toMatchObject({ message: String(N), version: 1 + N });
      // The races did happen (otherwise this test proves nothing).
      expect(conflicts).toBeGreaterThan(0);
    });

    it('concurrent attachToRequest from two pools to two requests: one wins every document, never a split', async () => {
      await fresh();
      const other = await open({ url: db.url, migrate: false });
      for (let round = 0; round < 15; round++) {
        const docs = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
        for (const d of docs) await ok(s.stores.documents.insert(d));
        const ids = docs.map((d) => d.id);
        // Each links in its own order, inside a transaction that yields before committing.
        const attach = (store: PostgresStore, order: string[], requestId: string) =>
          store.uow.transaction((tx) => pipe(tx.documents.attachToRequest(TENANT_A, order, requestId), TE.chainFirstTaskK(() => () => pause(round % 3))))();
        const [a, b] = await Promise.all([attach(s, ids, 'req_A'), attach(other, [...ids].reverse(), 'req_B')]);
        expect(E.isRight(a) !== E.isRight(b)).toBe(true);
        const loser = E.isRight(a) ? b : a;
        expect(E.isLeft(loser) && tagOf(loser.left)).toBe('ConcurrentModification');
        const winner = E.isRight(a) ? 'req_A' : 'req_B';
        for (const d of await ok(s.stores.documents.findByIds(TENANT_A, ids))) expect(d.signatureRequestId).toBe(winner);
      }
    });

    it('a statement waiting on a row lock longer than lockTimeoutMs fails with ConcurrentModification', async () => {
      await fresh({ lockTimeoutMs: 200 });
      const req = makeSignatureRequest(TENANT_A, { version: 1 });
      await ok(s.stores.signatureRequests.insert(req));
      const { release, holder } = await holdRowLock(req);
      const started = Date.now();
      const e = await fails(s.stores.signatureRequests.update({ ...req, title: 'second', version: 2 }));
      expect(tagOf(e)).toBe('ConcurrentModification');
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
      release();
      expect(E.isRight(await holder)).toBe(true);
      expect((await ok(s.stores.signatureRequests.findById(TENANT_A, req.id)))?.title).toBe('first');
    });

    describe("create-request's unread form (as the HTTP adapter runs it: execute, transactions side by side)", () => {
      const me: Principal = { tenant: TENANT_A, scopes: ['*'], credential: { kind: 'api_key', keyId: 'key_a' } };
      // One id generator for all the creates of a test: each request an id of its own.
      let ids = createSequentialIds();
      beforeEach(() => {
        ids = createSequentialIds();
      });
      const deps = () => ({ uow: s.uow, clock: createManualClock(new Date(at(0))), ids, pageLimits: { maxPagesPerDocument: 30, maxPagesPerRequest: 40 } });
      const create = (documentIds: string[]) => {
        const d = deps();
        return execute(d)(createSignatureRequest(d)(me, { title: 'Lease', documentIds }))();
      };

      it('free documents: the link, the insert and the COMMIT go with BEGIN in one write to the socket, answered once', async () => {
        await fresh();
        const docs = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
        for (const d of docs) await ok(s.stores.documents.insert(d));
        // Warm: the pool's connection open, its statements parsed.
        expect(E.isRight(await create([docs[0]!.id]))).toBe(true);
        const flushes = countSocketWrites();
        const syncs = countSyncs();
        let r;
        try {
          r = await create([docs[1]!.id]);
        } finally {
          flushes.stop();
          syncs.stop();
        }
        expect(E.isRight(r) && (await ok(s.stores.documents.findById(TENANT_A, docs[1]!.id)))?.signatureRequestId).toBe(E.isRight(r) && r.right.id);
        expect(flushes.count()).toBe(1);
        expect(syncs.count()).toBe(1);
      });

      it("an embedder's title with NUL is a validation failure naming the field, not a store failure, and nothing is written", async () => {
        await fresh();
        const doc = makeDocument(TENANT_A);
        await ok(s.stores.documents.insert(doc));
        const d = deps();
        const r = await execute(d)(createSignatureRequest(d)(me, { title: 'Lease\u0000', documentIds: [doc.id], message: 'half \uD800 a pair' }))();
        expect(r).toEqual(
          E.left({
            _tag: 'ValidationFailed',
            detail: 'title must not contain NUL or unpaired surrogate characters.',
            errors: [{ path: 'title', message: 'must not contain NUL or unpaired surrogate characters' }],
          }),
        );
        expect((await ok(s.stores.documents.findById(TENANT_A, doc.id)))?.signatureRequestId).toBeNull();
        // The same create with text PostgreSQL can keep goes through: the refusal was the text's alone.
        expect(E.isRight(await execute(d)(createSignatureRequest(d)(me, { title: 'Lease \u{1F58B}', documentIds: [doc.id] }))())).toBe(true);
      });

      it('ten creates racing for three documents: each document in one request at most, and every loser told which is taken', async () => {
        await fresh();
        const [a, b, c] = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
        for (const d of [a, b, c]) await ok(s.stores.documents.insert(d));
        const lists = [[a], [a, b], [b, a], [c, a], [a, c], [b], [a], [b, c], [c], [a, b, c]].map((l) => l.map((d) => d.id));
        const outcomes = await Promise.all(lists.map(create));
        const created = outcomes.filter(E.isRight).map((r) => r.right);
        expect(created.length).toBeGreaterThan(0);
        for (const r of outcomes) if (E.isLeft(r)) expect(r.left).toMatchObject({ _tag: 'InvalidState', detail: expect.stringMatching(/^Document doc_\w+ already belongs to signature request req_\w+\.$/) });
        const requests = await ok(s.stores.signatureRequests.list(TENANT_A, { limit: 100, order: 'asc', after: null, filter: {} }));
        expect(requests.items.map((r) => r.id).sort()).toEqual(created.map((r) => r.id).sort());
        for (const r of created) for (const id of r.documentIds) expect((await ok(s.stores.documents.findById(TENANT_A, id)))?.signatureRequestId).toBe(r.id);
      });

      it('a document locked elsewhere past lockTimeoutMs: a lost race, not a refusal, so the command does not wait again', async () => {
        await fresh({ lockTimeoutMs: 200 });
        const doc = makeDocument(TENANT_A);
        await ok(s.stores.documents.insert(doc));
        let transactions = 0;
        const counting = { ...s.uow, transaction: ((work, options) => (transactions++, s.uow.transaction(work, options))) as typeof s.uow.transaction };
        await db.raw(async (c) => {
          await c.query('BEGIN');
          await c.query('SELECT 1 FROM documents WHERE id = $1 FOR UPDATE', [doc.id]);
          try {
            const d = { ...deps(), uow: counting };
            const r = await execute(d)(createSignatureRequest(d)(me, { title: 'Lease', documentIds: [doc.id] }))();
            expect(r).toEqual(E.left({ _tag: 'ConcurrentModification', resource: 'row', id: '55P03' }));
            expect(transactions).toBe(1);
          } finally {
            await c.query('ROLLBACK');
          }
        });
        expect((await ok(s.stores.documents.findById(TENANT_A, doc.id)))?.signatureRequestId).toBeNull();
      });

      it("a key's record being inserted elsewhere past lockTimeoutMs: insertNew fails as a lost race, not as a taken key", async () => {
        await fresh({ lockTimeoutMs: 200 });
        const rec = makeIdempotencyRecord(TENANT_A);
        await db.raw(async (c) => {
          await c.query('BEGIN');
          await c.query("INSERT INTO idempotency_keys (org_id, mode, key, fingerprint, state, response, created_at, locked_until, expires_at) VALUES ($1, $2, $3, 'elsewhere', 'in_progress', NULL, now(), now() + interval '1 minute', now() + interval '1 day')", [
            rec.tenant.orgId,
            rec.tenant.mode,
            rec.key,
          ]);
          try {
            expect(await fails(s.uow.transaction((tx) => tx.idempotency.insertNew(rec), { deferWrites: true }))).toEqual({ _tag: 'ConcurrentModification', resource: 'row', id: '55P03' });
            expect(await fails(s.stores.idempotency.insertNew(rec))).toEqual({ _tag: 'ConcurrentModification', resource: 'row', id: '55P03' });
          } finally {
            await c.query('ROLLBACK');
          }
        });
        await ok(s.stores.idempotency.insertNew(rec));
      });

      it('a page limit larger than the column holds, or infinite, is no limit (configuration never fails a create)', async () => {
        await fresh();
        for (const maxPagesPerRequest of [2 ** 31, Infinity]) {
          const docs = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
          for (const doc of docs) await ok(s.stores.documents.insert(doc));
          for (const ids of [[docs[0]!.id], [docs[1]!.id, docs[2]!.id]]) {
            const d = { ...deps(), pageLimits: { maxPagesPerDocument: 30, maxPagesPerRequest } };
            expect(E.isRight(await execute(d)(createSignatureRequest(d)(me, { title: 'Lease', documentIds: ids }))())).toBe(true);
          }
        }
      });
    });

    it('a statement that runs longer than statementTimeoutMs is cancelled, and its connection serves again', async () => {
      await fresh({ statementTimeoutMs: 300, poolSize: 1 });
      // A wait no lock timeout covers: the pool's sessions carry the limit.
      await expect(s.pool.query('SELECT pg_sleep(60)')).rejects.toMatchObject({ code: '57014' });
      // The one pooled connection was not left waiting: a store statement answers.
      expect(await ok(s.stores.documents.findById(TENANT_A, 'doc_none'))).toBeNull();
    });

    it('a lock wait still ends as ConcurrentModification under a short statement timeout: the lock timeout stays below it', async () => {
      await fresh({ statementTimeoutMs: 300 });
      const e = makeWebhookEndpoint(TENANT_A);
      await ok(s.stores.webhookEndpoints.insert(e));
      await db.raw(async (c) => {
        await c.query('BEGIN');
        await c.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [e.id]);
        try {
          const r = await fails(s.uow.transaction((tx) => tx.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id)));
          expect(tagOf(r)).toBe('ConcurrentModification');
        } finally {
          await c.query('ROLLBACK');
        }
      });
    });

    it('refuses a statementTimeoutMs PostgreSQL would not take as a limit, and a lock timeout not below it', async () => {
      for (const bad of [0, -1, 2.5, 2 ** 31]) await expect(openPostgresStore({ url: db.url, migrate: false, statementTimeoutMs: bad })).rejects.toThrow(RangeError);
      await expect(openPostgresStore({ url: db.url, migrate: false, statementTimeoutMs: 1_000, lockTimeoutMs: 1_000 })).rejects.toThrow(/below statementTimeoutMs/);
    });

    it('keeps an idle pooled connection open by default; with idleTimeoutMs the pool closes it once idle that long', async () => {
      // A connection closed while idle made the next request wait for a new backend and the parse of every
      // prepared statement (docs/performance.md, twenty-second round). node-postgres closes one after 10 s
      // unless told otherwise. Only the pool's timers are faked; its connections are real.
      const kept = await open({ url: db.url, migrate: false });
      const closing = await open({ url: db.url, migrate: false, idleTimeoutMs: 60_000 });
      vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
      try {
        for (const store of [kept, closing]) expect(await ok(store.stores.documents.findById(TENANT_A, 'doc_none'))).toBeNull();
        expect([kept.pool.totalCount, closing.pool.totalCount]).toEqual([1, 1]);
        vi.advanceTimersByTime(59_999);
        expect([kept.pool.totalCount, closing.pool.totalCount]).toEqual([1, 1]);
        // An hour of quiet.
        vi.advanceTimersByTime(3_600_000);
        expect([kept.pool.totalCount, closing.pool.totalCount]).toEqual([1, 0]);
      } finally {
        vi.useRealTimers();
      }
      // Both answer: the kept connection, and a new one for the other.
      for (const store of [kept, closing]) expect(await ok(store.stores.documents.findById(TENANT_A, 'doc_none'))).toBeNull();
      for (const bad of [-1, 2.5, 2 ** 31]) await expect(openPostgresStore({ url: db.url, migrate: false, idleTimeoutMs: bad })).rejects.toThrow(RangeError);
    });

    it('close waits for nothing and leaves no connection behind', async () => {
      const store = await openPostgresStore({ url: db.url, migrate: false });
      await ok(store.stores.apiKeys.count());
      await ok(store.uow.transaction((tx) => tx.apiKeys.count()));
      const stop = await store.listen('esig_close_test', () => undefined);
      await stop();
      await store.close();
      for (let i = 0; i < 50 && (await connectionsTo(db)) > 0; i++) await pause(20);
      expect(await connectionsTo(db)).toBe(0);
    });

    it("the top-level stores' delivery lookups of one turn are one statement; a transaction's are one each", async () => {
      await fresh();
      const endpoint = makeWebhookEndpoint(TENANT_A);
      await ok(s.stores.webhookEndpoints.insert(endpoint));
      const deliveries = Array.from({ length: 5 }, () => makeDelivery(TENANT_A, { endpointId: endpoint.id }));
      for (const d of deliveries) await ok(s.stores.webhookDeliveries.insert(d));
      const texts: string[] = [];
      const query = s.pool.query.bind(s.pool) as (config: pg.QueryConfig) => Promise<pg.QueryResult>;
      (s.pool as unknown as { query: typeof query }).query = (config) => (texts.push(config.text), query(config));
      try {
        const found = await Promise.all(deliveries.map((d) => ok(s.stores.webhookDeliveries.findWithEndpoint(TENANT_A, d.id))));
        expect(found).toEqual(deliveries.map((delivery) => ({ delivery, endpoint })));
        expect(texts).toHaveLength(1);
        // Alone in its turn, a lookup is a statement of its own.
        expect(await ok(s.stores.webhookDeliveries.findWithEndpoint(TENANT_A, deliveries[0]!.id))).toEqual({ delivery: deliveries[0], endpoint });
        expect(texts).toHaveLength(2);
        // A want PostgreSQL refuses (a NUL in a text value) fails the shared statement; asked again alone,
        // the others are answered, and only that call fails.
        texts.length = 0;
        const mixed = await Promise.all([
          s.stores.webhookDeliveries.findWithEndpoint(TENANT_A, deliveries[1]!.id)(),
          s.stores.webhookDeliveries.findWithEndpoint(TENANT_A, 'dlv_\u0000')(),
          s.stores.webhookDeliveries.findWithEndpoint(TENANT_A, deliveries[2]!.id)(),
        ]);
        expect(mixed.map((r) => (E.isRight(r) ? r.right : r.left._tag))).toEqual([{ delivery: deliveries[1], endpoint }, 'StoreFailure', { delivery: deliveries[2], endpoint }]);
        expect(texts).toHaveLength(4);
      } finally {
        delete (s.pool as unknown as { query?: unknown }).query;
      }
      const calls = watchStatements();
      try {
        await ok(s.uow.transaction((tx) => TE.sequenceArray(deliveries.map((d) => tx.webhookDeliveries.findWithEndpoint(TENANT_A, d.id)))));
      } finally {
        calls.stop();
      }
      expect(calls.seen.map((c) => c.text.split(/\s/)[0])).toEqual(['BEGIN', ...deliveries.map(() => 'SELECT'), 'COMMIT']);
    });
  });

  describe('row decoding', () => {
    let db: TestDatabase;
    let s: PostgresStore;
    beforeAll(async () => {
      db = await freshDb();
      s = await openPostgresStore({ url: db.url });
    });
    afterAll(async () => {
      await s?.close();
    });

    it('an undecodable row is a StoreFailure naming the row, not a crash', async () => {
      const doc = makeDocument(TENANT_A);
      const req = makeSignatureRequest(TENANT_A);
      await ok(s.stores.documents.insert(doc));
      await ok(s.stores.signatureRequests.insert(req));
      await db.raw(async (c) => {
        await c.query("UPDATE documents SET status = 'SHREDDED' WHERE id = $1", [doc.id]);
        await c.query(`UPDATE signature_requests SET data = '{"id": 1}' WHERE id = $1`, [req.id]);
      });
      for (const te of [
        s.stores.documents.findById(TENANT_A, doc.id),
        s.stores.documents.list(TENANT_A, { limit: 10, order: 'desc', after: null, filter: {} }),
        s.stores.signatureRequests.findById(TENANT_A, req.id),
      ]) {
        const e = await fails(te as TE.TaskEither<unknown, unknown>);
        expect(tagOf(e)).toBe('StoreFailure');
        const cause = (e as { cause: unknown }).cause;
        expect(cause).toBeInstanceOf(RowDecodeError);
        expect(String((cause as Error).message)).toMatch(/documents row doc_\w+: status: expected DocumentStatus|signature_requests row req_\w+: data/);
      }
    });

    it('undecodable webhook rows are StoreFailures naming the row', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      const d = makeDelivery(TENANT_A);
      await ok(s.stores.webhookEndpoints.insert(e));
      await ok(s.stores.webhookDeliveries.insert(d));
      await db.raw(async (c) => {
        await c.query(`UPDATE webhook_endpoints SET secrets = '[{"sealed": "x", "createdAt": "yesterday", "retiresAt": null}]' WHERE id = $1`, [e.id]);
        await c.query("UPDATE webhook_deliveries SET status = 'lost' WHERE id = $1", [d.id]);
      });
      for (const te of [
        s.stores.webhookEndpoints.findById(TENANT_A, e.id),
        s.stores.webhookEndpoints.findSubscribed(TENANT_A, 'request.sent'),
        s.stores.webhookDeliveries.findById(TENANT_A, d.id),
      ]) {
        const cause = (await fails(te as TE.TaskEither<unknown, unknown>)) as { cause: unknown };
        expect(cause.cause).toBeInstanceOf(RowDecodeError);
        expect(String((cause.cause as Error).message)).toMatch(/webhook_endpoints row whe_\w+: secrets\.0\.createdAt|webhook_deliveries row dlv_\w+: status/);
      }
    });

    it('a row whose copied columns disagree with its JSON is refused', async () => {
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT' });
      await ok(s.stores.signatureRequests.insert(req));
      await db.raw((c) => c.query("UPDATE signature_requests SET status = 'SENT' WHERE id = $1", [req.id]));
      const e = await fails(s.stores.signatureRequests.findById(TENANT_A, req.id));
      expect(String((e as { cause: Error }).cause.message)).toMatch(/column status is SENT but data says DRAFT/);
    });

    it('a timestamp finer than a millisecond (written by hand) is refused rather than rounded', async () => {
      const doc = makeDocument(TENANT_A);
      await ok(s.stores.documents.insert(doc));
      await db.raw((c) => c.query("UPDATE documents SET created_at = created_at + interval '1 microsecond' WHERE id = $1", [doc.id]));
      const e = await fails(s.stores.documents.findById(TENANT_A, doc.id));
      expect(String((e as { cause: Error }).cause.message)).toMatch(/created_at: expected timestamptz.*finer than a millisecond/);
    });

    it('refuses to write timestamps in any spelling but the canonical one', async () => {
      for (const createdAt of ['2026-11-23T08:00:00Z', '2026-11-23T09:00:00.000+01:00', '2026-11-23 08:00:00.000Z']) {
        expect(tagOf(await fails(s.stores.events.append(makeEvent(TENANT_A, { createdAt }))))).toBe('StoreFailure');
      }
    });

    it('timestamps round-trip exactly whatever the session time zone, historical offsets included', async () => {
      // A URL's own options replace the adapter's TimeZone=UTC; Kathmandu was +05:41:16 before 1920.
      const url = new URL(db.url);
      url.searchParams.set('options', '-c TimeZone=Asia/Kathmandu');
      const local = await open({ url: url.toString(), migrate: false });
      const times = ['1900-01-01T00:00:00.000Z', '1969-12-31T23:59:59.999Z', '2026-11-23T08:00:00.001Z', '2038-01-19T03:14:08.500Z', '9999-12-31T23:59:59.999Z', '0001-01-01T00:00:00.000Z'];
      for (const createdAt of times) {
        const doc = makeDocument(TENANT_A, { createdAt });
        await ok(local.stores.documents.insert(doc));
        expect((await ok(local.stores.documents.findById(TENANT_A, doc.id)))?.createdAt).toBe(createdAt);
        expect((await ok(s.stores.documents.findById(TENANT_A, doc.id)))?.createdAt).toBe(createdAt);
      }
      // PostgreSQL has no year 0 in its input: refused, not stored as something else.
      expect(tagOf(await fails(local.stores.documents.insert(makeDocument(TENANT_A, { createdAt: '0000-06-01T00:00:00.000Z' }))))).toBe('StoreFailure');
      const offset = await local.pool.query<{ t: string }>("SELECT '1900-01-01T00:00:00Z'::timestamptz::text AS t");
      expect(offset.rows[0]!.t).toMatch(/\+05:41:16$/);
    });

    it('bytes come back as a Uint8Array of their own, large sizes included', async () => {
      const big = Uint8Array.from({ length: 3 * 1024 * 1024 + 7 }, (_, i) => (i * 31) & 0xff);
      await ok(s.stores.documentContents.put(TENANT_A, { kind: 'upload', documentId: 'doc_big' }, big));
      const got = (await ok(s.stores.documentContents.get(TENANT_A, { kind: 'upload', documentId: 'doc_big' })))!;
      expect(Object.getPrototypeOf(got)).toBe(Uint8Array.prototype);
      expect(got.byteLength).toBe(big.byteLength);
      expect(Buffer.compare(got, big)).toBe(0);
    });

    it('large content is read in slices, a statement each, and one replaced while it is read comes back whole: the new, never a mix', async () => {
      // The store's statements on the pool, answered as the driver answers them; each answer's bytea noted.
      const answered: number[] = [];
      let onSlice: (n: number) => Promise<void> = async () => undefined;
      const conn: Conn = {
        query: async (stmt, values) => {
          const r = await s.pool.query(queryConfig(stmt, values));
          const bytes = r.rows[0]?.bytes as Buffer | null | undefined;
          if (bytes) answered.push(bytes.byteLength);
          if (typeof stmt === 'string' && stmt.includes('substring')) await onSlice(answered.length);
          return r;
        },
        unusable: () => null,
      };
      const contents = pgDocumentContents(conn);
      const key = { kind: 'upload', documentId: 'doc_sliced' } as const;
      const old = Uint8Array.from({ length: 3 * READ_SLICE_BYTES + 5 }, (_, i) => (i * 7) & 0xff);
      await ok(contents.put(TENANT_A, key, old));
      const got = (await ok(contents.get(TENANT_A, key)))!;
      expect(Buffer.compare(got, old)).toBe(0);
      // Four slices, none over READ_SLICE_BYTES: no answer holds the whole.
      expect(answered).toEqual([READ_SLICE_BYTES, READ_SLICE_BYTES, READ_SLICE_BYTES, 5]);
      // Small content comes whole with the first statement.
      answered.length = 0;
      await ok(contents.put(TENANT_A, { kind: 'upload', documentId: 'doc_small' }, old.subarray(0, 100)));
      expect((await ok(contents.get(TENANT_A, { kind: 'upload', documentId: 'doc_small' })))!.byteLength).toBe(100);
      expect(answered).toEqual([100]);
      // Replaced after its second slice (as another transaction would): read again, the new bytes whole.
      // Of the same size: only the row version tells the two apart.
      const next = Uint8Array.from({ length: old.byteLength }, (_, i) => (i * 13 + 1) & 0xff);
      onSlice = async (n) => {
        if (n === 2) await db.raw((c) => c.query("UPDATE document_contents SET bytes = $1 WHERE document_id = 'doc_sliced'", [Buffer.from(next)]));
      };
      answered.length = 0;
      const reread = (await ok(contents.get(TENANT_A, key)))!;
      expect(Buffer.compare(reread, next)).toBe(0);
      expect(answered.length).toBeGreaterThan(3);
      // Stored uncompressed out of line (migration 18), so that a slice reads only its own TOAST chunks.
      expect(await db.raw(async (c) => (await c.query("SELECT attstorage FROM pg_attribute WHERE attrelid = 'document_contents'::regclass AND attname = 'bytes'")).rows[0].attstorage)).toBe('e');
    });

    it('sizes beyond 2 GiB and aggregates with every optional part set round-trip', async () => {
      const doc = makeDocument(TENANT_A, { sizeBytes: 2 ** 40 + 3 });
      await ok(s.stores.documents.insert(doc));
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
      const base = makeSignatureRequest(TENANT_A);
      const req: SignatureRequest = {
        ...base,
        status: 'COMPLETED',
        completedAt: at(50),
        finishedSha256: 'f'.repeat(64),
        recipients: base.recipients.map((r, i) => ({
          ...r,
          authenticatedAt: at(20 + i),
          otp: { codeHash: 'h'.repeat(64), expiresAt: at(600) },
          authFailures: i + 1,
          otpSentAt: [at(10), at(11 + i)],
          signature: i === 0 ? { kind: 'drawn', value: 'data:image/png;base64,iVBORw0KGgo=' } : { kind: 'typed', value: 'Bo Ek' },
        })),
      };
      await ok(s.stores.signatureRequests.insert(req));
      expect(await ok(s.stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(req);
    });

    it('a field coordinate JSON cannot hold (NaN) is refused on write', async () => {
      const base = makeSignatureRequest(TENANT_A);
      const bad = { ...base, fields: base.fields.map((f, i) => (i === 0 ? { ...f, x: Number.NaN } : f)) };
      expect(tagOf(await fails(s.stores.signatureRequests.insert(bad)))).toBe('StoreFailure');
      expect(await ok(s.stores.signatureRequests.findById(TENANT_A, base.id))).toBeNull();
    });
  });
});
