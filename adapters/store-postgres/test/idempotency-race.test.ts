import { randomBytes } from 'node:crypto';
import type { Command, DomainError, IdempotencyRecord, Stores, UnitOfWork } from '@esig/core';
import { IDEMPOTENCY_LOCK_MS, IDEMPOTENCY_TTL_MS, createSignatureRequest, executeIdempotently, storeFailure } from '@esig/core';
import * as TE from '@esig/core/task-either';
import { createAesGcmSecretBox } from '@esig/runtime-node';
import { TENANT_A, createSequentialIds, makeDocument } from '@esig/testkit';
import * as E from 'fp-ts/lib/Either.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../src/index.js';
import { openPostgresStore } from '../src/index.js';
import type { TestDatabase } from './pg.js';
import { available, createTestDatabase, emptyAllTables } from './pg.js';

/**
 * Two callers repeat one Idempotency-Key whose record no longer counts: expired (a key reused after 24 hours,
 * before the purge), or a claim whose holder vanished (its lock run out). On PostgreSQL both read the record
 * side by side, both decide to run; only one may. Each caller's read of the record is held until both have
 * read it, so the interleaving that a busy server produces now and then happens every time.
 */
const secrets = createAesGcmSecretBox(randomBytes(32));
const render = (r: E.Either<DomainError, unknown>) => (E.isRight(r) ? { status: 201, body: JSON.stringify(r.right), headers: {} } : null);

describe.skipIf(!available)('idempotency on PostgreSQL: a record that no longer counts is decided on by one caller', () => {
  let db: TestDatabase;
  let s: PostgresStore;
  let clockMs = Date.now();
  const clock = { now: () => new Date(clockMs) };
  beforeAll(async () => {
    db = await createTestDatabase();
    s = await openPostgresStore({ url: db.url });
  });
  afterAll(async () => {
    await s?.close();
    await db?.drop();
  });
  afterEach(async () => {
    clockMs = Date.now();
    await emptyAllTables(s.pool);
  });

  let runs = 0;
  const insertDoc: Command<string> = (tx) => async () => {
    runs++;
    const d = makeDocument(TENANT_A);
    const r = await tx.documents.insert(d)();
    return E.isLeft(r) ? r : E.right(d.id);
  };
  const docCount = async () => Number((await s.pool.query<{ n: string }>('SELECT count(*) AS n FROM documents')).rows[0]!.n);

  /** The store's unit of work, with each transaction's read of a record held until two have read. */
  const meetingAfterFind = (): UnitOfWork => {
    let arrived = 0;
    let meet!: () => void;
    const met = new Promise<void>((r) => (meet = r));
    return {
      ...s.uow,
      transaction: (work, options) =>
        s.uow.transaction(
          (tx) =>
            work({
              ...tx,
              idempotency: {
                ...tx.idempotency,
                find: (t, key) => async () => {
                  const r = await tx.idempotency.find(t, key)();
                  if (++arrived === 2) meet();
                  // Bounded: a caller that never gets here (answered before reading) must not hang the other.
                  await Promise.race([met, new Promise((later) => setTimeout(later, 2000))]);
                  return r;
                },
              },
            } as Stores),
          options,
        ),
    };
  };
  const twoAtOnce = async (key: string) => {
    const uow = meetingAfterFind();
    const exec = executeIdempotently({ uow, clock, secrets, stores: s.stores });
    return Promise.all([exec({ tenant: TENANT_A, key, fingerprint: 'fp' }, insertDoc, render)(), exec({ tenant: TENANT_A, key, fingerprint: 'fp' }, insertDoc, render)()]);
  };

  it('an expired record: one of two concurrent retries runs, the other is answered in progress', async () => {
    const first = await executeIdempotently({ uow: s.uow, clock, secrets, stores: s.stores })({ tenant: TENANT_A, key: 'k', fingerprint: 'fp' }, insertDoc, render)();
    expect(E.isRight(first)).toBe(true);
    clockMs += IDEMPOTENCY_TTL_MS + 1000;
    runs = 0;
    const before = await docCount();
    const results = await twoAtOnce('k');
    expect(runs).toBe(1);
    expect((await docCount()) - before).toBe(1);
    expect(results.filter((r) => E.isRight(r) && !r.right.replayed)).toHaveLength(1);
    expect(results.filter((r) => E.isLeft(r)).map((r) => (r as E.Left<DomainError>).left)).toEqual([{ _tag: 'IdempotencyInProgress' }]);
  });

  it('a claim whose holder vanished: one of two concurrent retries takes it over', async () => {
    const now = clockMs;
    const stale: IdempotencyRecord = {
      tenant: TENANT_A,
      key: 'k2',
      fingerprint: 'fp',
      state: 'in_progress',
      response: null,
      createdAt: new Date(now).toISOString(),
      lockedUntil: new Date(now + IDEMPOTENCY_LOCK_MS).toISOString(),
      expiresAt: new Date(now + IDEMPOTENCY_TTL_MS).toISOString(),
    };
    expect(await s.stores.idempotency.insertIfAbsent(stale)()).toEqual(E.right(true));
    clockMs += IDEMPOTENCY_LOCK_MS + 1000;
    runs = 0;
    const results = await twoAtOnce('k2');
    expect(runs).toBe(1);
    expect(await docCount()).toBe(1);
    expect(results.filter((r) => E.isRight(r) && !r.right.replayed)).toHaveLength(1);
    // The record keeps the first claim's creation and expiry (a take-over is not a new use of the key).
    const record = await s.stores.idempotency.find(TENANT_A, 'k2')();
    expect(record).toMatchObject({ right: { state: 'completed', createdAt: stale.createdAt, expiresAt: stale.expiresAt } });
  });
  /**
   * A caller whose command is still running when its lock runs out (a slow transaction, a database that stopped
   * answering for a while): another caller takes the key over and runs. The first one's completion, or its release
   * after a failure, must then leave the second one's record alone: applied by key alone, the completion committed a
   * second run of the command under a record that replays another answer, and the release deleted the record, so
   * that the next retry ran the command once more.
   */
  const outlivedLock = async (key: string, firstEnds: Command<string>) => {
    let letFirstGoOn!: () => void;
    const gate = new Promise<void>((r) => (letFirstGoOn = r));
    let running!: () => void;
    const firstRuns = new Promise<void>((r) => (running = r));
    const exec = executeIdempotently({ uow: s.uow, clock, secrets, stores: s.stores });
    const first = exec({ tenant: TENANT_A, key, fingerprint: 'fp' }, (tx) => async () => {
      running();
      await gate;
      return firstEnds(tx)();
    }, render)();
    await firstRuns;
    clockMs += IDEMPOTENCY_LOCK_MS + 1000;
    const second = await exec({ tenant: TENANT_A, key, fingerprint: 'fp' }, insertDoc, render)();
    expect(second).toMatchObject({ right: { replayed: false } });
    letFirstGoOn();
    const firstOutcome = await first;
    const retry = await exec({ tenant: TENANT_A, key, fingerprint: 'fp' }, insertDoc, render)();
    return { firstOutcome, second: (second as E.Right<{ response: unknown }>).right, retry };
  };

  it('a holder that outlived its lock: its completion fails, and the key replays what the caller that took it over ran', async () => {
    const { firstOutcome, second, retry } = await outlivedLock('k3', insertDoc);
    // Answered as a call in flight: a client retries that with the same key, and gets the answer of the one that ran.
    expect(firstOutcome).toEqual(E.left({ _tag: 'IdempotencyInProgress' }));
    expect(await docCount()).toBe(1);
    expect(retry).toEqual(E.right({ response: second.response, replayed: true }));
  });

  it('a holder that outlived its lock and failed: its release leaves the record of the caller that took it over', async () => {
    const { firstOutcome, second, retry } = await outlivedLock('k4', () => TE.left(storeFailure(new Error('the database went away'))));
    expect(firstOutcome).toMatchObject({ left: { _tag: 'StoreFailure' } });
    expect(await docCount()).toBe(1);
    expect(retry).toEqual(E.right({ response: second.response, replayed: true }));
  });

  /*
   * A command with an unread form (create-request) stores a new key's record in its own one transaction, with no claim
   * committed first: concurrent calls with one key meet at the record's unique index, or at the documents' rows.
   */
  describe("a new key with create-request's unread form", () => {
    const me = { tenant: TENANT_A, scopes: ['*' as const], credential: { kind: 'api_key' as const, keyId: 'key_a' } };
    const renderReq = (r: E.Either<DomainError, { id: string }>) =>
      E.isRight(r) ? { status: 201, body: r.right.id, headers: {} } : r.left._tag === 'StoreFailure' ? null : { status: 409, body: r.left._tag, headers: {} };

    it('eight calls at once with one key: one request, and every answer its own (or in progress), for the same or other documents', async () => {
      const docs = [makeDocument(TENANT_A), makeDocument(TENANT_A)];
      for (const d of docs) expect(E.isRight(await s.stores.documents.insert(d)())).toBe(true);
      const ids = createSequentialIds();
      const deps = { uow: s.uow, clock, ids, pageLimits: { maxPagesPerDocument: 30, maxPagesPerRequest: 40 } };
      const exec = executeIdempotently({ uow: s.uow, clock, secrets, stores: s.stores });
      // Half list the first document, half the second: those meet only at the key's record.
      const outcomes = await Promise.all(
        Array.from({ length: 8 }, (_, i) =>
          exec({ tenant: TENANT_A, key: 'k-new', fingerprint: 'fp' }, createSignatureRequest(deps)(me, { title: 't', documentIds: [docs[i % 2]!.id] }), renderReq)(),
        ),
      );
      const requests = (await s.pool.query<{ id: string }>('SELECT id FROM signature_requests')).rows.map((r) => r.id);
      expect(requests).toHaveLength(1);
      const answered = outcomes.filter(E.isRight).map((r) => r.right);
      expect(answered.filter((o) => !o.replayed)).toHaveLength(1);
      for (const o of answered) expect(o.response).toEqual({ status: 201, body: requests[0], headers: {} });
      for (const r of outcomes) if (E.isLeft(r)) expect(r.left).toEqual({ _tag: 'IdempotencyInProgress' });
      const record = await s.stores.idempotency.find(TENANT_A, 'k-new')();
      expect(E.isRight(record) && record.right).toMatchObject({ state: 'completed' });
    });
  });
});

