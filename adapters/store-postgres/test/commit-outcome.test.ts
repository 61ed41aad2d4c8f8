// A transaction whose COMMIT PostgreSQL answered, on a connection that then went silent before the rest of the
// answer (its ReadyForQuery): found by a helper session's attacker review of the statement batches. The
// transaction committed, and must say so; its connection's state is unknown, and must not serve again.
import { concurrentModification } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import type { Conn } from '../src/connection.js';
import { anyRows, prepared, write } from '../src/connection.js';
import { available, relayTo } from './pg.js';
import { INSERT, freshIds, insert, oneConnectionUnitOfWork, tableT } from './table-t.js';

/** A prepared write: the first time on a connection it is parsed, and goes with a Sync of its own. */
const PREPARED = prepared('commit_outcome_insert', `${INSERT} ON CONFLICT DO NOTHING`);

/** ReadyForQuery, as it ends a chunk of the server's answers: 'Z', length 5, status. */
const endsWithReadyForQuery = (d: Buffer) => d.length >= 6 && d[d.length - 6] === 0x5a && d.readInt32BE(d.length - 5) === 5;

describe.skipIf(!available)('a COMMIT answered on a connection that goes silent before its ReadyForQuery', () => {
  const { db, ids } = tableT();

  /**
   * Runs `write` twice in a transaction on a pool of one connection through a relay that, once armed, passes on the
   * answer that carries COMMIT up to its final ReadyForQuery, then nothing more in either direction (a peer gone
   * without closing, a lost NAT entry). The transaction must be reported committed, and the next one must get a new
   * connection (the silent one discarded, not lent out to wait) and commit.
   */
  const commitGoesSilent = async (write: (c: Conn, id: number) => Promise<unknown>, deferWrites: boolean) => {
    const relay = await relayTo(db().url, (d, connection, toClient) => {
      if (!connection.armed || !endsWithReadyForQuery(d) || !d.toString('latin1').includes('COMMIT')) return false;
      toClient(d.subarray(0, d.length - 6));
      connection.silent = true;
      return true;
    });
    const { pool, uow } = oneConnectionUnitOfWork(relay.url, 800);
    const { base, id } = await freshIds(ids);
    try {
      const r = await uow.transaction(
        (tx) => async () => {
          const c = tx.documents as unknown as Conn;
          await write(c, id(1));
          await write(c, id(2));
          for (const c of relay.connections) c.armed = true;
          return E.right('done');
        },
        { deferWrites },
      )();
      expect((await ids()).slice(base)).toEqual([id(1), id(2)]);
      expect(r).toEqual(E.right('done'));
      const next = await uow.transaction((tx) => async () => {
        const c = tx.documents as unknown as Conn;
        return insert(c, id(3));
      }, { deferWrites: true })();
      expect(next).toEqual(E.right(undefined));
      expect((await ids()).slice(base)).toEqual([id(1), id(2), id(3)]);
      expect(relay.connections).toHaveLength(2);
    } finally {
      await pool.end().catch(() => undefined);
      await relay.close();
    }
  };

  it('is reported committed when it went in one batch with the deferred writes', () => commitGoesSilent(insert, true), 30_000);

  it('is reported committed when it went alone, after writes that were waited for', () => commitGoesSilent(insert, false), 30_000);

  it('is reported committed when it went after deferred writes of a statement new to the connection (each with its own Sync)', () =>
    commitGoesSilent((c, id) => write(c, PREPARED, [id], anyRows, (code) => concurrentModification('t', code), PREPARED)(), true), 30_000);
});
