// Transactions run with `deferWrites` (how esig's commands run) at their edges: what must never commit, which
// error is reported, what must not run after a write that will fail. Written as an attacker's review of the
// change that made writes go out unanswered; the first three failed before their fixes.
import type { StoreError, Stores } from '@esig/core';
import { overridePorts } from '@esig/core';
import { TENANT_A, fails, makeDocument, makeJob, ok, tagOf } from '@esig/testkit';
import { createNestingGuard } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Conn } from '../src/connection.js';
import { anyRows, run, write } from '../src/connection.js';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import { bindStores } from '../src/stores.js';
import { createUnitOfWork } from '../src/unit-of-work.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase, emptyAllTables } from './pg.js';

describe.skipIf(!available)('deferred writes at their edges', () => {
  let db: TestDatabase;
  let s: PostgresStore;
  beforeAll(async () => {
    db = await createTestDatabase();
    await (await openPostgresStore({ url: db.url })).close();
  });
  afterAll(async () => {
    await db.drop();
  });
  afterEach(async () => {
    await s?.close().catch(() => undefined);
  });
  const fresh = async () => {
    s = await openPostgresStore({ url: db.url, migrate: false });
    await emptyAllTables(s.pool);
    return s;
  };
  /** A unit of work over the store's pool that lets the test reach the transaction's Conn. */
  const probingUow = () => {
    let conn: Conn | undefined;
    const uow = createUnitOfWork(
      s.pool,
      (c) => {
        conn = c;
        return bindStores(c);
      },
      () => undefined,
      createNestingGuard(false),
    );
    return { uow, conn: () => conn! };
  };
  const corkedClients = () =>
    ((s.pool as unknown as { _clients: Array<{ connection: { stream: { writableCorked: number } } }> })._clients ?? []).map(
      (c) => c.connection.stream.writableCorked,
    );

  it('a write whose values the driver could fail to encode is not deferred: its failure never reaches the server, and the COMMIT would commit the rest', async () => {
    await fresh();
    const { uow, conn } = probingUow();
    const doc = makeDocument(TENANT_A);
    // pg's prepareValue throws on this value: bind fails client-side, the server never sees an error.
    const unencodable = { toPostgres: () => { throw new Error('unencodable value'); } };
    const r = await uow.transaction(
      (tx) =>
        pipe(
          tx.documents.insert(doc),
          TE.chain(() => write(conn(), 'SELECT $1::text', [unencodable], anyRows, undefined, 'SELECT $1::text')),
        ),
      { deferWrites: true },
    )();
    const committed = await ok(s.stores.documents.findById(TENANT_A, doc.id));
    expect(E.isLeft(r)).toBe(true);
    expect(committed).toBeNull();
  });

  it("a deferred write refused (25P02) behind a statement that failed in a parallel branch does not replace that statement's error", async () => {
    await fresh();
    const job = makeJob(TENANT_A);
    await ok(s.stores.jobs.enqueue(job));
    const work = (tx: Stores) =>
      TE.sequenceArray<void, StoreError>([
        // Not deferred (jobs use `run`): a reused job id, ConcurrentModification.
        pipe(
          tx.jobs.enqueue({ ...job, dedupeKey: 'other' }),
          TE.map(() => undefined),
        ),
        // Deferred: asked for a moment later, so sent behind the failed enqueue, and refused with 25P02.
        pipe(
          TE.fromTask(() => new Promise<void>((r) => setTimeout(r, 20))),
          TE.chain(() => tx.documents.insert(makeDocument(TENANT_A))),
        ),
      ]);
    const waited = await fails(s.uow.transaction(work));
    const deferred = await fails(s.uow.transaction(work, { deferWrites: true }));
    expect(tagOf(waited)).toBe('ConcurrentModification');
    expect(deferred).toEqual(waited);
  });

  it('an external port (overridePorts) is not run after a write that fails: overridePorts turns deferWrites off', async () => {
    await fresh();
    const existing = makeDocument(TENANT_A);
    await ok(s.stores.documents.insert(existing));
    const blobs = new Map<string, string>([[existing.id, 'original bytes']]);
    const external = overridePorts(s, {
      documentContents: () => ({
        put: (_t: unknown, key: unknown, bytes: Uint8Array) => TE.fromIO(() => void blobs.set(String(key).replace(/^.*?:/, ''), Buffer.from(bytes).toString())),
        get: () => TE.right(null),
      }) as unknown as Stores['documentContents'],
    });
    // As upload-document does: insert the row, then store its bytes (here an id that is taken).
    const upload = (tx: Stores) =>
      pipe(
        tx.documents.insert({ ...existing, name: 'impostor' }),
        TE.chain(() => tx.documentContents.put(TENANT_A, existing.id as never, Buffer.from('impostor bytes'))),
      );
    const e = await fails(external.uow.transaction(upload, { deferWrites: true }));
    expect(tagOf(e)).toBe('ConcurrentModification');
    expect([...blobs.values()]).toEqual(['original bytes']);
  });

  it('an exception thrown by work after a deferred write: ROLLBACK, nothing committed, socket uncorked', async () => {
    await fresh();
    const doc = makeDocument(TENANT_A);
    const e = await fails(
      s.uow.transaction(
        (tx) =>
          pipe(
            tx.documents.insert(doc),
            TE.chain(() => () => Promise.reject(new Error('boom'))),
          ),
        { deferWrites: true },
      ),
    );
    expect(tagOf(e)).toBe('StoreFailure');
    expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
    expect(corkedClients().every((n) => n === 0)).toBe(true);
  });

  it('attach: re-linking to the same request and duplicate ids are harmless when deferred; a foreign document raises', async () => {
    await fresh();
    const a = makeDocument(TENANT_A);
    const b = makeDocument(TENANT_A, { signatureRequestId: 'req_same' });
    await ok(s.stores.documents.insert(a));
    await ok(s.stores.documents.insert(b));
    await ok(s.uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [a.id, b.id, a.id, b.id], 'req_same'), { deferWrites: true }));
    expect((await ok(s.stores.documents.findById(TENANT_A, a.id)))?.signatureRequestId).toBe('req_same');
    const e = await fails(s.uow.transaction((tx) => tx.documents.attachToRequest(TENANT_A, [a.id, 'doc_missing'], 'req_same'), { deferWrites: true }));
    expect(tagOf(e)).toBe('ConcurrentModification');
  });

  it('a connection killed after a deferred write, before the COMMIT: Left, nothing committed, no crash', async () => {
    await fresh();
    const { uow, conn } = probingUow();
    const doc = makeDocument(TENANT_A);
    const r = await uow.transaction(
      (tx) =>
        pipe(
          run(conn(), 'read', 'SELECT pg_backend_pid() AS pid', []),
          TE.chainFirst(() => tx.documents.insert(doc)),
          TE.chain((res) =>
            TE.fromTask(() => db.raw((c) => c.query('SELECT pg_terminate_backend($1)', [res.rows[0].pid])).then(() => undefined)),
          ),
        ),
      { deferWrites: true },
    )();
    expect(E.isLeft(r)).toBe(true);
    expect(await ok(s.stores.documents.findById(TENANT_A, doc.id))).toBeNull();
  });

  it('many failing deferred writes in a row: the first one is reported, later ones are not unhandled rejections', async () => {
    await fresh();
    const doc = makeDocument(TENANT_A);
    await ok(s.stores.documents.insert(doc));
    const e = await fails(
      s.uow.transaction(
        (tx) =>
          pipe(
            tx.documents.insert(doc),
            TE.chain(() => tx.documents.insert(makeDocument(TENANT_A))),
            TE.chain(() => tx.documents.setStatusForRequest(TENANT_A, { id: 'req_none', documentIds: ['doc_none'] }, 'UPLOADED')),
            TE.chain(() => tx.documents.insert(makeDocument(TENANT_A))),
          ),
        { deferWrites: true },
      ),
    );
    expect(e).toMatchObject({ _tag: 'ConcurrentModification', resource: 'document', id: doc.id });
    expect(corkedClients().every((n) => n === 0)).toBe(true);
  });
});
