// A transaction whose first statement is a deferred write sends its BEGIN at the head of the writes' batch, with no
// round trip of its own. The attack: a BEGIN that fails there. PostgreSQL must then skip the writes behind it (one
// Sync for all), so none runs on its own, outside a transaction, and commits; the transaction must fail with BEGIN's
// error, and its connection, in an unknown state, must not serve again.
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { Conn } from '../src/connection.js';
import { available, relayTo } from './pg.js';
import { freshIds, insert, oneConnectionUnitOfWork, tableT } from './table-t.js';

/** Rewrites `from` to `to` (of the same length, so every message keeps its length) in what the client sends, once armed. */
const corrupting = (from: string, to: string) => (d: Buffer, connection: { armed: boolean }) => {
  if (!connection.armed) return d;
  const text = d.toString('latin1');
  return text.includes(from) ? Buffer.from(text.split(from).join(to), 'latin1') : d;
};

describe.skipIf(!available)('a BEGIN that fails', () => {
  const { db, ids } = tableT();

  /**
   * Runs `work` in a transaction through a relay that turns `from` into `to` on its way to the server, on a pool of
   * one connection; then a plain transaction, which must get a new connection and commit.
   */
  const failingBegin = async (
    from: string,
    to: string,
    work: (c: Conn, id: (n: number) => number) => Promise<unknown>,
    lockTimeoutMs?: number,
  ): Promise<{ outcome: E.Either<unknown, unknown>; rows: number[] }> => {
    const relay = await relayTo(db().url, undefined, corrupting(from, to));
    const { pool, uow } = oneConnectionUnitOfWork(relay.url, 5_000);
    const { base, id } = await freshIds(ids);
    try {
      for (const c of relay.connections) c.armed = false;
      // The connection is made (and its start-up sent) before the relay is armed.
      await pool.query('SELECT 1');
      for (const c of relay.connections) c.armed = true;
      const outcome = await uow.transaction(
        (tx) => async () => {
          await work(tx.documents as unknown as Conn, id);
          return E.right('done');
        },
        { deferWrites: true, ...(lockTimeoutMs === undefined ? {} : { lockTimeoutMs }) },
      )();
      const rows = (await ids()).slice(base);
      // The next transaction gets a new connection (the one whose BEGIN failed was discarded), and commits.
      for (const c of relay.connections) c.armed = false;
      const next = await uow.transaction((tx) => async () => insert(tx.documents as unknown as Conn, id(9)), { deferWrites: true })();
      expect(next).toEqual(E.right(undefined));
      expect((await ids()).slice(base)).toEqual([...rows, id(9)]);
      expect(relay.connections).toHaveLength(2);
      return { outcome, rows };
    } finally {
      await pool.end().catch(() => undefined);
      await relay.close();
    }
  };

  const beginFailed = (outcome: E.Either<unknown, unknown>, message: RegExp) => {
    expect(E.isLeft(outcome)).toBe(true);
    const left = (outcome as E.Left<{ _tag: string; cause?: Error }>).left;
    expect(left._tag).toBe('StoreFailure');
    expect(String(left.cause?.message)).toMatch(message);
  };

  it('at the head of the deferred writes: none of them runs, and the transaction fails with its error', async () => {
    const { outcome, rows } = await failingBegin('READ COMMITTED', 'READ COMMITTEX', async (c, id) => {
      await insert(c, id(1));
      await insert(c, id(2));
    });
    beginFailed(outcome, /syntax error/);
    expect(rows).toEqual([]);
  }, 30_000);

  it("with a lock timeout whose SET LOCAL fails: the writes behind it do not run", async () => {
    const { outcome, rows } = await failingBegin(
      'SET LOCAL lock_timeout',
      'SET LOCAL lock_timeoux',
      async (c, id) => {
        await insert(c, id(1));
        await insert(c, id(2));
      },
      100,
    );
    beginFailed(outcome, /lock_timeoux/);
    expect(rows).toEqual([]);
  }, 30_000);

  it('before a first read (BEGIN then goes as a query): the writes after it are not sent', async () => {
    const { outcome, rows } = await failingBegin('READ COMMITTED', 'READ COMMITTEX', async (c, id) => {
      await c.query('SELECT 1', [], 'read').catch(() => undefined);
      await insert(c, id(1));
      await insert(c, id(2));
    });
    beginFailed(outcome, /syntax error/);
    expect(rows).toEqual([]);
  }, 30_000);
});
