import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import type { SignatureRequest, Stores } from '@esig/core';
import type { StoreHarness } from '@esig/testkit';
import { TENANT_A, at, describeStoreContract, fails, makeApiKey, makeDelivery, makeDocument, makeEvent, makeLogEntry, makeSignatureRequest, makeWebhookEndpoint, ok, tagOf } from '@esig/testkit';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { LATEST_SCHEMA_VERSION, RowDecodeError, SchemaTooNewError, openSqliteStore } from '../src/index.js';
import { startCheckpointer } from '../src/checkpointer.js';
import { keysetSql, keysetSqlBy } from '../src/keyset.js';
import { attachSql, findByIdsSql } from '../src/documents.js';
import { claimSql, nextRunAtSql } from '../src/jobs.js';
import { CANCEL_PENDING_SQL } from '../src/webhook-deliveries.js';
import { PURGE_EXPIRED_SQL } from '../src/idempotency.js';
import { FIND_SUBSCRIBED_SQL } from '../src/webhook-endpoints.js';
import { loadMigrations, migrate } from '../src/migrations.js';
import { createConn } from '../src/connection.js';
import { bindStores } from '../src/stores.js';
import { createUnitOfWork } from '../src/unit-of-work.js';
import { openJournals } from './journals.js';

/** Polls `probe` until it holds; generous, because it only bounds how long a broken thread is waited for. */
const until = async (probe: () => boolean, what: string, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!probe()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

const tempDirs: string[] = [];
const freshDbPath = (file = 'esig.db') => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-sqlite-'));
  tempDirs.push(dir);
  return path.join(dir, file);
};

describeStoreContract('sqlite', async (): Promise<StoreHarness> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-sqlite-contract-'));
  // Checked as in development: a transaction begun inside another's work fails instead of hanging the suite.
  const store = openSqliteStore({ path: path.join(dir, 'esig.db'), checkNesting: true });
  return {
    stores: store.stores,
    uow: store.uow,
    onNewJobs: store.onNewJobs,
    cleanup: async () => {
      store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
});

describe('sqlite adapter', () => {
  const open: SqliteStore[] = [];
  const openStore = (p: string, migrate?: boolean, checkpoint?: 'inline' | 'background', statementJournals?: 'memory' | 'file') => {
    const s = openSqliteStore({
      path: p,
      ...(migrate === undefined ? {} : { migrate }),
      ...(checkpoint === undefined ? {} : { checkpoint }),
      ...(statementJournals === undefined ? {} : { statementJournals }),
    });
    open.push(s);
    return Object.assign(s, { path: p });
  };
  afterEach(() => {
    for (const s of open.splice(0)) E.tryCatch(() => s.close(), () => undefined);
    for (const d of tempDirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  describe('migrations', () => {
    it('the migrations folder runs 1..LATEST_SCHEMA_VERSION', () => {
      expect(loadMigrations().map((m) => m.version)).toEqual(Array.from({ length: LATEST_SCHEMA_VERSION }, (_, i) => i + 1));
    });

    it('a new database is migrated on open, and migrating again applies nothing', () => {
      const s = openStore(freshDbPath());
      expect(s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect(s.migrate()).toBe(0);
      expect(s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
    });

    it('with migrate: false nothing is applied until migrate() is called', () => {
      const s = openStore(freshDbPath(), false);
      expect(s.schemaVersion()).toBe(0);
      expect(s.migrate()).toBe(LATEST_SCHEMA_VERSION);
      expect(s.migrate()).toBe(0);
    });

    it('upgrades a version 1 database, and aggregates written before signing read with the new fields defaulted', async () => {
      const p = freshDbPath();
      const raw = new Database(p);
      expect(migrate(raw, loadMigrations().slice(0, 1))).toBe(1);
      const req = makeSignatureRequest(TENANT_A, { finishedSha256: null });
      // The aggregate as version 1 wrote it: no identification, no signature, no finished digest.
      const { finishedSha256: _, ...v1 } = req;
      const v1Data = {
        ...v1,
        recipients: req.recipients.map(({ authenticatedAt: _a, otp: _o, authFailures: _f, signature: _s, ...r }) => r),
      };
      raw
        .prepare('INSERT INTO signature_requests (id, org_id, mode, status, created_at, version, data) VALUES (?, ?, ?, ?, ?, ?, ?)')
        .run(req.id, req.orgId, req.mode, req.status, req.createdAt, req.version, JSON.stringify(v1Data));
      raw.close();
      const s = openStore(p);
      expect(s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      const expected: SignatureRequest = {
        ...req,
        recipients: req.recipients.map((r) => ({ ...r, authenticatedAt: null, otp: null, authFailures: 0, signature: null })),
      };
      expect(await ok(s.stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(expected);
    });

    it('upgrades a version 3 database: documents uploaded before page sizes were recorded read with pageSizes null', async () => {
      const p = freshDbPath();
      const raw = new Database(p);
      expect(migrate(raw, loadMigrations().slice(0, 3))).toBe(3);
      const doc = makeDocument(TENANT_A, { pageSizes: null });
      raw
        .prepare('INSERT INTO documents (id, org_id, mode, name, status, page_count, size_bytes, sha256, signature_request_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)')
        .run(doc.id, doc.orgId, doc.mode, doc.name, doc.status, doc.pageCount, doc.sizeBytes, doc.sha256, doc.signatureRequestId, doc.createdAt);
      raw.close();
      const s = openStore(p);
      expect(s.schemaVersion()).toBe(LATEST_SCHEMA_VERSION);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('refuses to open a database migrated by newer code', () => {
      const p = freshDbPath();
      openStore(p).close();
      const raw = new Database(p);
      raw.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(LATEST_SCHEMA_VERSION + 1, 'future', at(0));
      raw.close();
      let thrown: unknown;
      try {
        openSqliteStore({ path: p });
      } catch (e) {
        thrown = e;
      }
      expect(thrown).toBeInstanceOf(SchemaTooNewError);
      expect((thrown as SchemaTooNewError).databaseVersion).toBe(LATEST_SCHEMA_VERSION + 1);
      expect(() => openSqliteStore({ path: p, migrate: false })).toThrow(SchemaTooNewError);
    });
  });

  describe('files and connections', () => {
    it('creates the parent folder, runs in WAL mode, and keeps data across close and reopen', async () => {
      const p = path.join(path.dirname(freshDbPath()), 'nested', 'deeper', 'esig.db');
      const doc = makeDocument(TENANT_A);
      const first = openStore(p);
      await ok(first.stores.documents.insert(doc));
      expect(fs.existsSync(`${p}-wal`)).toBe(true);
      first.close();
      const raw = new Database(p);
      expect(raw.pragma('journal_mode', { simple: true })).toBe('wal');
      raw.close();
      const second = openStore(p);
      expect(await ok(second.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    describe('checkpoints', () => {
      /** Fills the WAL through `write` with about `pages` pages of log entries, in transactions of 2,000 rows. */
      const fill = async (s: SqliteStore, pages: number) => {
        for (let done = 0; done < pages; done += 250)
          await ok(s.uow.transaction((tx) => tx.apiLog.append(Array.from({ length: 2_000 }, () => makeLogEntry(TENANT_A, { target: 'x'.repeat(200) })))));
      };
      const size = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);
      /**
       * How many of this process's file descriptors are open on the database or its WAL and shared-memory
       * files, from /proc (Linux; null elsewhere): every connection, in any thread, holds some.
       */
      const openOn = (p: string): number | null => {
        if (!fs.existsSync('/proc/self/fd')) return null;
        let n = 0;
        for (const fd of fs.readdirSync('/proc/self/fd')) {
          try {
            if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(p)) n += 1;
          } catch {
            // The descriptor closed while we listed them.
          }
        }
        return n;
      };

      it('the background thread copies the WAL into the file while the writer never checkpoints, and closes its connection when stopped', async () => {
        const p = freshDbPath();
        const writer = new Database(p);
        writer.pragma('journal_mode = WAL');
        // This writer never checkpoints by itself: whatever reaches the file is the thread's doing.
        writer.pragma('wal_autocheckpoint = 0');
        writer.exec('CREATE TABLE t (x TEXT)');
        const errors: string[] = [];
        const thread = startCheckpointer(p, (m) => errors.push(m), 10);
        const insert = writer.prepare('INSERT INTO t VALUES (?)');
        writer.transaction(() => {
          for (let i = 0; i < 5_000; i++) insert.run('y'.repeat(500));
        })();
        await until(() => size(p) > 2_000_000, 'the thread to checkpoint the rows into the file');
        const withThread = openOn(p);
        thread.stop();
        writer.close();
        expect(errors).toEqual([]);
        if (withThread !== null) {
          expect(withThread).toBeGreaterThan(0);
          expect(openOn(p)).toBe(0);
        }
      });

      it("by default, a store has its WAL checkpointed in the background, and close() stops the thread before the store's connections close", async () => {
        const p = freshDbPath();
        const errors: string[] = [];
        const s = openSqliteStore({ path: p, onCheckpointError: (m) => errors.push(m) });
        // A store without the thread holds this many descriptors (its two connections); this one holds more
        // once its thread has opened its own connection.
        const reference = openStore(freshDbPath(), undefined, 'inline');
        const two = openOn(path.dirname(reference.path));
        if (two !== null) await until(() => openOn(p)! > two, 'the checkpointer thread to open its connection');
        const before = size(p);
        await fill(s, 1_500);
        await until(() => size(p) > before + 2_000_000, 'the rows to reach the database file');
        s.close();
        // The thread closed its connection before the store's own: the write connection was the last, and
        // it removed the WAL before close() returned, as without the thread.
        expect(fs.existsSync(`${p}-wal`)).toBe(false);
        expect(openOn(p) ?? 0).toBe(0);
        expect(errors).toEqual([]);
        const reopened = openStore(p);
        expect((await ok(reopened.stores.apiLog.list(TENANT_A, { limit: 3_000, order: 'asc', after: null, filter: {} }))).items).toHaveLength(3_000);
      });

      it("with checkpoint: 'inline', the write connection checkpoints, and nothing outlives close()", async () => {
        const p = freshDbPath();
        const s = openSqliteStore({ path: p, checkpoint: 'inline' });
        await fill(s, 1_500);
        s.close();
        // No thread: the write connection was the last, and it removed the WAL before close() returned.
        expect(fs.existsSync(`${p}-wal`)).toBe(false);
        expect(openOn(p) ?? 0).toBe(0);
      });
    });

    it('refuses an in-memory database, which two connections cannot share', () => {
      expect(() => openSqliteStore({ path: ':memory:' })).toThrow(/file path/);
    });

    it("the read connection does not see a transaction's uncommitted writes while it is open", async () => {
      const p = freshDbPath();
      const s = openStore(p);
      const doc = makeDocument(TENANT_A);
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      // Resolved with what the transaction read once it holds at the gate (however long a loaded machine
      // takes to get there).
      let reached!: (found: unknown) => void;
      const inside = new Promise<unknown>((r) => (reached = r));
      const running = s.uow.transaction((tx) =>
        pipe(
          tx.documents.insert(doc),
          TE.chain(() => tx.documents.findById(TENANT_A, doc.id)),
          TE.chainFirstTaskK((found) => {
            reached(found);
            return () => gate;
          }),
        ),
      )();
      expect(await inside).toEqual(doc);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
      // A third, independent connection (another process, say) agrees.
      const raw = new Database(p, { readonly: true });
      expect(raw.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 0 });
      release();
      expect(E.isRight(await running)).toBe(true);
      expect(raw.prepare('SELECT COUNT(*) AS n FROM documents').get()).toEqual({ n: 1 });
      raw.close();
    });

    it('a top-level write while a transaction is open waits its turn instead of failing or deadlocking', async () => {
      const s = openStore(freshDbPath());
      const [a, b] = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
      const order: string[] = [];
      const tx = s.uow.transaction((t) =>
        pipe(
          t.documents.insert(a),
          TE.chainFirstTaskK(() => () => new Promise<void>((r) => setTimeout(r, 20))),
          TE.map(() => void order.push('tx')),
        ),
      )();
      const top = pipe(
        s.stores.documents.insert(b),
        TE.map(() => void order.push('top')),
      )();
      const [rt, rtop] = await Promise.all([tx, top]);
      expect(E.isRight(rt) && E.isRight(rtop)).toBe(true);
      expect(order).toEqual(['tx', 'top']);
    });

    it('with checkNesting, a nested transaction, or a top-level write inside a transaction, fails at once instead of hanging', async () => {
      const s = openSqliteStore({ path: freshDbPath(), checkNesting: true });
      open.push(s);
      const doc = makeDocument(TENANT_A);
      const e = await fails(s.uow.transaction(() => s.uow.transaction((tx) => tx.documents.insert(doc))));
      expect(tagOf(e)).toBe('StoreFailure');
      expect(tagOf(await fails(s.uow.transaction(() => s.stores.documents.insert(doc))))).toBe('StoreFailure');
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
    });

    it('without checkNesting (the default), a transaction begun inside another is not refused: it queues behind it', async () => {
      // Begun and not awaited, so the outer transaction can end; awaited, it would wait forever, which is
      // what checkNesting exists to catch. The default leaves the check's cost out (docs/performance.md).
      const s = openStore(freshDbPath());
      const doc = makeDocument(TENANT_A);
      let inner: Promise<E.Either<unknown, unknown>> | undefined;
      await ok(s.uow.transaction(() => TE.fromIO(() => void (inner = s.uow.transaction((tx) => tx.documents.insert(doc))()))));
      expect(E.isRight(await inner!)).toBe(true);
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toEqual(doc);
    });

    it('a row whose new-field values are wrong is refused, not defaulted', async () => {
      const p = freshDbPath();
      const s = openStore(p);
      const req = makeSignatureRequest(TENANT_A);
      await ok(s.stores.signatureRequests.insert(req));
      const raw = new Database(p);
      raw.prepare("UPDATE signature_requests SET data = json_set(data, '$.recipients[0].authFailures', 'many') WHERE id = ?").run(req.id);
      raw.close();
      const e = await fails(s.stores.signatureRequests.findById(TENANT_A, req.id));
      expect(String((e as { cause: Error }).cause.message)).toMatch(/authFailures/);
    });

    describe('group commit', () => {
      const count = (p: string) => {
        const raw = new Database(p, { readonly: true });
        try {
          return (raw.prepare('SELECT COUNT(*) AS n FROM documents').get() as { n: number }).n;
        } finally {
          raw.close();
        }
      };

      it('transactions started together commit together: none is visible, nor answered, before the last of them has run', async () => {
        const p = freshDbPath();
        const s = openStore(p);
        const docs = Array.from({ length: 5 }, () => makeDocument(TENANT_A));
        const seenByLast: number[] = [];
        const answeredWith: number[] = [];
        const runs = docs.map((d, i) =>
          s.uow
            .transaction((tx) =>
              pipe(
                tx.documents.insert(d),
                // The last one looks from outside (another process's view): its group's earlier members ran
                // and are not committed yet.
                TE.chainFirstIOK(() => () => void (i === docs.length - 1 && seenByLast.push(count(p)))),
              ),
            )()
            .then((r) => {
              // By the time anyone hears of success, every member of the group is on disk.
              answeredWith.push(count(p));
              return r;
            }),
        );
        expect((await Promise.all(runs)).every(E.isRight)).toBe(true);
        expect(seenByLast).toEqual([0]);
        expect(answeredWith).toEqual([5, 5, 5, 5, 5]);
      });

      it('a member that fails or throws is rolled back alone; the others of its group commit, in order, each seeing the ones before', async () => {
        const s = openStore(freshDbPath());
        const [a, b, c] = [makeDocument(TENANT_A), makeDocument(TENANT_A), makeDocument(TENANT_A)];
        const results = await Promise.all([
          s.uow.transaction((tx) => tx.documents.insert(a))(),
          s.uow.transaction((tx) =>
            pipe(
              tx.documents.insert(b),
              TE.chainW(() => TE.left({ _tag: 'Refused' as const })),
            ),
          )(),
          s.uow.transaction((tx) =>
            pipe(
              tx.documents.insert(makeDocument(TENANT_A, { id: 'doc_thrown' })),
              TE.chain(() => () => Promise.reject(new Error('boom'))),
            ),
          )(),
          s.uow.transaction((tx) =>
            pipe(
              tx.documents.insert(c),
              // Sees the first member's write, not the failed ones'.
              TE.chain(() => tx.documents.findById(TENANT_A, a.id)),
              TE.chain((foundA) => TE.map((foundB) => [foundA?.id, foundB])(tx.documents.findById(TENANT_A, b.id))),
            ),
          )(),
        ]);
        expect(E.isRight(results[0]!)).toBe(true);
        expect(results[1]).toEqual(E.left({ _tag: 'Refused' }));
        const thrown = results[2]!;
        expect(E.isLeft(thrown) && tagOf(thrown.left as never)).toBe('StoreFailure');
        expect(results[3]).toEqual(E.right([a.id, null]));
        expect(await ok(s.stores.documents.findById(TENANT_A, a.id))).toEqual(a);
        expect(await ok(s.stores.documents.findById(TENANT_A, b.id))).toBeNull();
        expect(await ok(s.stores.documents.findById(TENANT_A, 'doc_thrown'))).toBeNull();
        expect(await ok(s.stores.documents.findById(TENANT_A, c.id))).toEqual(c);
      });

      it("a group's first member, which runs without a savepoint, fails or throws alone: the rest commit, in order", async () => {
        const s = openStore(freshDbPath());
        for (const failing of [
          (tx: Stores) => pipe(tx.documents.insert(makeDocument(TENANT_A, { id: 'doc_refused' })), TE.chainW(() => TE.left({ _tag: 'Refused' as const }))),
          (tx: Stores) => pipe(tx.documents.insert(makeDocument(TENANT_A, { id: 'doc_thrown' })), TE.chain(() => () => Promise.reject(new Error('boom')))),
        ]) {
          const [b, c] = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
          const results = await Promise.all([
            s.uow.transaction(failing)(),
            s.uow.transaction((tx) => tx.documents.insert(b))(),
            s.uow.transaction((tx) => pipe(tx.documents.insert(c), TE.chain(() => tx.documents.findById(TENANT_A, b.id))))(),
          ]);
          expect(E.isLeft(results[0]!)).toBe(true);
          expect(results[1]).toEqual(E.right(undefined));
          expect(results[2]).toEqual(E.right(b));
          for (const gone of ['doc_refused', 'doc_thrown']) expect(await ok(s.stores.documents.findById(TENANT_A, gone))).toBeNull();
          for (const kept of [b, c]) expect(await ok(s.stores.documents.findById(TENANT_A, kept.id))).toEqual(kept);
        }
      });

      // SQLite ends the whole transaction by itself on some errors (disk full, I/O, out of memory). A member that
      // swallowed such an error and wrote on used to write outside any transaction: each write committed on its
      // own, while the member's caller was told that nothing had. Simulated here with a ROLLBACK on the unit of
      // work's own connection, which leaves the connection exactly as SQLite's own rollback does.
      it('a write after SQLite ended the transaction under it fails, and nothing of it is committed', async () => {
        const file = freshDbPath();
        openStore(file).close(); // migrated
        const db = new Database(file);
        const conn = createConn(db);
        const uow = createUnitOfWork(conn, (c) => bindStores(c));
        const [first, after] = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
        let afterWrite: E.Either<unknown, unknown> | null = null;
        const r = await uow.transaction((tx) =>
          pipe(
            tx.documents.insert(first),
            TE.chainW(() => {
              db.exec('ROLLBACK'); // what SQLite does on SQLITE_FULL, SQLITE_IOERR…
              return TE.right(undefined);
            }),
            TE.chainW(() => async () => (afterWrite = await tx.documents.insert(after)())),
            TE.map(() => undefined),
          ),
        )();
        expect(E.isLeft(r)).toBe(true);
        expect(afterWrite === null ? null : E.isLeft(afterWrite)).toBe(true);
        const check = new Database(file, { readonly: true });
        const ids = check.prepare('SELECT id FROM documents').pluck().all();
        check.close();
        db.close();
        expect(ids).toEqual([]);
      });

      // SQLite copies each page a savepoint's changes touch into a statement journal, which moves to a (deleted)
      // temporary file past 64 KiB: strace found two thirds of an idempotent create-request's writes going
      // there. A lone transaction has no other member to protect, and writes none. (With journals on file,
      // SQLite's default, where a savepoint would show as a temporary file.)
      it.runIf(process.platform === 'linux')('a lone transaction writes no statement journal, however many pages it changes', async () => {
        const s = openStore(freshDbPath(), undefined, undefined, 'file');
        const docs = Array.from({ length: 400 }, () => makeDocument(TENANT_A));
        await ok(s.uow.transaction((tx) => pipe(docs.map((d) => tx.documents.insert(d)), TE.sequenceSeqArray)));
        const req = makeSignatureRequest(TENANT_A, { documentIds: [] });
        await ok(s.stores.signatureRequests.insert(req));
        const before = openJournals();
        let during = -1;
        await ok(
          s.uow.transaction((tx) =>
            pipe(
              docs.map((d) => tx.documents.attachToRequest(TENANT_A, [d.id], req.id)),
              TE.sequenceSeqArray,
              TE.map(() => void (during = openJournals())),
            ),
          ),
        );
        expect(during - before).toBe(0);
        expect((await ok(s.stores.documents.findById(TENANT_A, docs[399]!.id)))?.signatureRequestId).toBe(req.id);
      });

      it('a group that hits a uniqueness violation keeps the members before and after it', async () => {
        const s = openStore(freshDbPath());
        const a = makeDocument(TENANT_A);
        const b = makeDocument(TENANT_A);
        const results = await Promise.all([
          s.uow.transaction((tx) => tx.documents.insert(a))(),
          s.uow.transaction((tx) => tx.documents.insert(a))(),
          s.uow.transaction((tx) => tx.documents.insert(b))(),
        ]);
        expect(results.map(E.isRight)).toEqual([true, false, true]);
        expect(await ok(s.stores.documents.findById(TENANT_A, b.id))).toEqual(b);
      });
    });

    it("a transaction's stores fail once it has ended instead of writing into the next one", async () => {
      const s = openStore(freshDbPath());
      let leaked: Stores | undefined;
      await ok(s.uow.transaction((tx) => TE.fromIO(() => void (leaked = tx))));
      const doc = makeDocument(TENANT_A);
      expect(tagOf(await fails(leaked!.documents.insert(doc)))).toBe('StoreFailure');
      expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
    });
  });

  /**
   * Key lookups are cached on the read side; each of these revokes a key somewhere the cache has to hear
   * of, with the key's entry warm, and looks it up again at once. A cache without that invalidation
   * answers the unrevoked key from memory and fails the test.
   */
  describe('API-key cache', () => {
    const warmKey = async (s: SqliteStore) => {
      const key = makeApiKey(TENANT_A);
      await ok(s.stores.apiKeys.insert(key));
      for (let i = 0; i < 3; i++) expect((await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))?.revokedAt).toBeNull();
      return key;
    };

    it('a revocation through this store is seen by the very next lookup', async () => {
      const s = openStore(freshDbPath());
      const key = await warmKey(s);
      await ok(s.stores.apiKeys.revoke(TENANT_A, key.id, at(5)));
      expect((await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))?.revokedAt).toBe(at(5));
    });

    it('a lookup made between the revoking statement and its commit is not kept past the commit', async () => {
      const s = openStore(freshDbPath());
      const key = await warmKey(s);
      let during: string | null | undefined;
      await ok(
        s.uow.transaction((tx) =>
          pipe(
            tx.apiKeys.revoke(TENANT_A, key.id, at(5)),
            // Not committed yet: the read connection still sees the key unrevoked, and caches it.
            TE.chain(() => s.stores.apiKeys.findBySecretHash(key.secretHash)),
            TE.map((k) => void (during = k?.revokedAt)),
          ),
        ),
      );
      expect(during).toBeNull();
      expect((await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))?.revokedAt).toBe(at(5));
    });

    it('a revocation committed by another connection (another process, another store) is seen at once', async () => {
      const file = freshDbPath();
      const s = openStore(file);
      const other = openStore(file);
      const key = await warmKey(s);
      await ok(other.stores.apiKeys.revoke(TENANT_A, key.id, at(5)));
      expect((await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))?.revokedAt).toBe(at(5));
      // And by a bare driver connection, as `sqlite3` on the command line would.
      const key2 = await warmKey(s);
      const raw = new Database(file);
      try {
        raw.prepare('UPDATE api_keys SET revoked_at = ? WHERE id = ?').run(at(6), key2.id);
      } finally {
        raw.close();
      }
      expect((await ok(s.stores.apiKeys.findBySecretHash(key2.secretHash)))?.revokedAt).toBe(at(6));
    });

    it('hands out frozen keys: a caller cannot widen or un-revoke the cached key for the next one', async () => {
      const s = openStore(freshDbPath());
      const key = await warmKey(s);
      await ok(s.stores.apiKeys.revoke(TENANT_A, key.id, at(5)));
      const got = (await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))!;
      expect(() => ((got as { revokedAt: string | null }).revokedAt = null)).toThrow(TypeError);
      expect(() => (got.scopes as string[]).push('*')).toThrow(TypeError);
      const again = (await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))!;
      expect(again.revokedAt).toBe(at(5));
      expect(again.scopes).toEqual(key.scopes);
    });

    it('a revocation rolled back leaves the key valid, and unknown hashes are answered null every time', async () => {
      const s = openStore(freshDbPath());
      const key = await warmKey(s);
      await fails(
        s.uow.transaction((tx) => pipe(tx.apiKeys.revoke(TENANT_A, key.id, at(5)), TE.chainW(() => TE.left('changed my mind')))),
      );
      expect((await ok(s.stores.apiKeys.findBySecretHash(key.secretHash)))?.revokedAt).toBeNull();
      for (let i = 0; i < 2; i++) expect(await ok(s.stores.apiKeys.findBySecretHash('f'.repeat(64)))).toBeNull();
    });
  });

  describe('row decoding', () => {
    it('an undecodable row is a StoreFailure naming the row, not a crash', async () => {
      const p = freshDbPath();
      const s = openStore(p);
      const doc = makeDocument(TENANT_A);
      const req = makeSignatureRequest(TENANT_A);
      await ok(s.stores.documents.insert(doc));
      await ok(s.stores.signatureRequests.insert(req));
      const raw = new Database(p);
      raw.prepare("UPDATE documents SET status = 'SHREDDED' WHERE id = ?").run(doc.id);
      raw.prepare("UPDATE signature_requests SET data = '{not json' WHERE id = ?").run(req.id);
      raw.close();
      for (const te of [
        s.stores.documents.findById(TENANT_A, doc.id),
        s.stores.documents.list(TENANT_A, { limit: 10, order: 'desc', after: null, filter: {} }),
        s.stores.signatureRequests.findById(TENANT_A, req.id),
      ]) {
        const e = await fails(te as TE.TaskEither<unknown, unknown>);
        expect(tagOf(e)).toBe('StoreFailure');
        const cause = (e as { cause: unknown }).cause;
        expect(cause).toBeInstanceOf(RowDecodeError);
        expect(String((cause as Error).message)).toMatch(/documents row doc_|signature_requests row req_/);
      }
    });

    it('undecodable webhook rows are StoreFailures naming the row', async () => {
      const p = freshDbPath();
      const s = openStore(p);
      const e = makeWebhookEndpoint(TENANT_A);
      const d = makeDelivery(TENANT_A);
      await ok(s.stores.webhookEndpoints.insert(e));
      await ok(s.stores.webhookDeliveries.insert(d));
      const raw = new Database(p);
      raw.prepare(`UPDATE webhook_endpoints SET events = '["request.sent", "request.lost"]' WHERE id = ?`).run(e.id);
      raw.prepare("UPDATE webhook_deliveries SET status = 'lost' WHERE id = ?").run(d.id);
      raw.close();
      for (const te of [
        s.stores.webhookEndpoints.findById(TENANT_A, e.id),
        s.stores.webhookEndpoints.findSubscribed(TENANT_A, 'request.sent'),
        s.stores.webhookDeliveries.findById(TENANT_A, d.id),
      ]) {
        const cause = (await fails(te as TE.TaskEither<unknown, unknown>)) as { cause: unknown };
        expect(cause.cause).toBeInstanceOf(RowDecodeError);
        expect(String((cause.cause as Error).message)).toMatch(/webhook_endpoints row whe_\w+: events\.1|webhook_deliveries row dlv_\w+: status/);
      }
    });

    it('a row whose copied columns disagree with its JSON is refused', async () => {
      const p = freshDbPath();
      const s = openStore(p);
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT' });
      await ok(s.stores.signatureRequests.insert(req));
      const raw = new Database(p);
      raw.prepare("UPDATE signature_requests SET status = 'SENT' WHERE id = ?").run(req.id);
      raw.close();
      const e = await fails(s.stores.signatureRequests.findById(TENANT_A, req.id));
      expect(String((e as { cause: Error }).cause.message)).toMatch(/column status is SENT but data says DRAFT/);
    });

    it('refuses to write timestamps that would not sort as text', async () => {
      const s = openStore(freshDbPath());
      const e = await fails(s.stores.events.append(makeEvent(TENANT_A, { createdAt: '2026-11-23T08:00:00Z' })));
      expect(tagOf(e)).toBe('StoreFailure');
    });
  });

  describe('query plans', () => {
    const plan = (db: Database.Database, sql: string, params: unknown[]) =>
      (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((r) => r.detail).join(' | ');

    // The PostgreSQL planner, with no statistics, read a whole org's documents for these (see store-postgres
    // plan-growth.test.ts). SQLite's, with none either (no ANALYZE ever ran), must reach them by primary key.
    it('create-request finds and attaches documents by primary key in an org of 20 k unanalyzed documents', () => {
      const p = freshDbPath();
      openStore(p).close();
      const db = new Database(p);
      const insert = db.prepare(
        "INSERT INTO documents (id, org_id, mode, name, status, page_count, size_bytes, sha256, created_at) VALUES (?, 'org', 'test', 'd', 'UPLOADED', 1, 1, 'a', ?)",
      );
      db.transaction(() => {
        for (let i = 0; i < 20_000; i++) insert.run(`doc_${i}`, at(i));
      })();
      expect(db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE name = 'sqlite_stat1'").get()).toEqual({ n: 0 });
      for (const n of [1, 3]) {
        const ids = Array.from({ length: n }, (_, i) => `doc_${i * 7}`);
        for (const [sql, params] of [
          [findByIdsSql(n), ['org', 'test', ...ids]],
          [attachSql(n), ['req', 'org', 'test', ...ids, 'req', 500, 'org', 'test', ...ids, 'req', n]],
        ] as const) {
          const detail = plan(db, sql, [...params]);
          const searches = detail.split(' | ').filter((d) => d.startsWith('SEARCH') || d.startsWith('SCAN'));
          expect(searches.length, detail).toBeGreaterThan(0);
          for (const d of searches) expect(d, sql).toMatch(/^SEARCH documents USING INDEX sqlite_autoindex_documents_1 \(id=\?\)/);
        }
      }
      db.close();
    });

    it('a purge batch reads expired records from their index and deletes them by rowid (no scan, no sort)', () => {
      const p = freshDbPath();
      openStore(p).close();
      const db = new Database(p, { readonly: true });
      const detail = plan(db, PURGE_EXPIRED_SQL, [{ now: at(0), from: '', limit: 1_000 }]);
      expect(detail).toMatch(/^SEARCH idempotency_keys USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(detail).toMatch(/SEARCH idempotency_keys USING COVERING INDEX idempotency_keys_expiry \(expires_at>\? AND expires_at<\?\)/);
      expect(detail).not.toMatch(/SCAN|TEMP B-TREE/);
      db.close();
    });

    it('every keyset page is an index range in index order (no scan, no sort)', () => {
      const p = freshDbPath();
      openStore(p).close();
      const db = new Database(p, { readonly: true });
      const tables = [
        { table: 'documents', columns: '*', filterColumn: 'status' },
        { table: 'signature_requests', columns: '*', filterColumn: 'status' },
        { table: 'events', columns: '*', filterColumn: 'type' },
        { table: 'api_keys', columns: '*' },
        { table: 'test_mailbox', columns: '*', filterColumn: 'to_address' },
        { table: 'webhook_endpoints', columns: '*' },
        { table: 'api_log', columns: '*', filterColumn: 'kind' },
      ];
      for (const spec of tables)
        for (const order of ['asc', 'desc'] as const)
          for (const filtered of spec.filterColumn === undefined ? [false] : [false, true]) {
            const sql = keysetSql(spec, order, filtered, true);
            const params = ['org', 'test', ...(filtered ? ['X'] : []), at(0), 'id', 26];
            const detail = plan(db, sql, params);
            expect(detail, sql).toMatch(/SEARCH .* USING (COVERING )?INDEX/);
            expect(detail, sql).toMatch(/\(created_at, ?id\)[<>]/);
            expect(detail, sql).not.toMatch(/TEMP B-TREE|SCAN/);
          }
      // The delivery log filters by endpoint, by event, or both (then either index is a range in order).
      const attempts = [
        [[], /webhook_attempts_page /],
        [['endpoint_id'], /webhook_attempts_page_by_endpoint /],
        [['event_id'], /webhook_attempts_page_by_event /],
        [['endpoint_id', 'event_id'], /webhook_attempts_page_by_(endpoint|event) /],
      ] as const;
      for (const [filters, index] of attempts)
        for (const order of ['asc', 'desc'] as const) {
          const sql = keysetSqlBy({ table: 'webhook_attempts', columns: '*' }, order, filters, true);
          const detail = plan(db, sql, ['org', 'test', ...filters.map(() => 'X'), at(0), 'id', 26]);
          expect(detail, sql).toMatch(/^SEARCH webhook_attempts USING (COVERING )?INDEX/);
          expect(detail, sql).toMatch(index);
          expect(detail, sql).toMatch(/\(created_at, ?id\)[<>]/);
          expect(detail, sql).not.toMatch(/TEMP B-TREE|SCAN/);
        }
      db.close();
    });

    it("subscribed endpoints come from the tenant's range of the page index in order, and cancelling reads only pending deliveries", () => {
      const p = freshDbPath();
      openStore(p).close();
      const db = new Database(p, { readonly: true });
      const subscribed = plan(db, FIND_SUBSCRIBED_SQL, ['org', 'test', 'request.sent']);
      expect(subscribed).toMatch(/^SEARCH webhook_endpoints USING INDEX webhook_endpoints_page \(org_id=\? AND mode=\?\)/);
      // json_each is the per-row test of the events array, not a scan of a table.
      expect(subscribed.replace(/SCAN json_each/, '')).not.toMatch(/TEMP B-TREE|SCAN/);
      const cancel = plan(db, CANCEL_PENDING_SQL, [at(0), 'org', 'test', 'whe_1']);
      expect(cancel).toMatch(/SEARCH webhook_deliveries USING INDEX webhook_deliveries_pending \(org_id=\? AND mode=\? AND endpoint_id=\?\)/);
      expect(cancel).not.toMatch(/TEMP B-TREE|SCAN/);
      db.close();
    });

    it("a claim reads each asked kind's range of the due-jobs index, the next due time reads no waiting job, and evidence is read in order from its index", () => {
      const p = freshDbPath();
      openStore(p).close();
      const db = new Database(p, { readonly: true });
      // Named parameters: one object, spread as the only argument.
      const claim = plan(db, claimSql(3), [{ k0: 'seal', k1: 'expire', k2: 'mail.invite', now: at(0), limit: 5, worker: 'w', lease: at(60) }]);
      // One range per kind, in (run_at, id) order, each stopping at the limit: never a walk over other kinds' jobs.
      expect(claim.match(/SEARCH jobs USING INDEX jobs_due \(kind=\? AND run_at<\?\)/g)).toHaveLength(3);
      expect(claim).not.toMatch(/SCAN jobs\b/);
      const next = plan(db, nextRunAtSql(2), [{ k0: 'seal', k1: 'expire' }]);
      expect(next.match(/SEARCH jobs USING INDEX jobs_due \(kind=\?\)/g)).toHaveLength(2);
      expect(next.match(/SEARCH jobs USING INDEX jobs_leased \(kind=\? AND locked_until>\?\)/g)).toHaveLength(2);
      expect(next).not.toMatch(/SCAN jobs\b/);
      const evidence = plan(db, 'SELECT * FROM evidence WHERE org_id = ? AND mode = ? AND request_id = ? ORDER BY at, id', ['org', 'test', 'req']);
      expect(evidence).toMatch(/SEARCH evidence USING INDEX evidence_by_request/);
      expect(evidence).not.toMatch(/TEMP B-TREE|SCAN/);
      db.close();
    });
  });
});
