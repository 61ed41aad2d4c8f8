import type { NewJobKinds, StoreError, Stores, TransactionOptions, UnitOfWork } from '@esig/core';
import { createNewJobKinds, noticingNewJobs, storeFailure } from '@esig/core';
import type { NestingGuard } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type pg from 'pg';
import type { Conn } from './connection.js';
import { queryConfig, toStoreError } from './connection.js';

interface TxScope {
  active: boolean;
}

/**
 * The pool as the top-level stores use it: reads anywhere, writes only outside a transaction's work. A
 * top-level write inside a transaction's work runs on a second connection: it is not part of the
 * transaction, and it waits forever if it touches a row the transaction has locked (the transaction waits
 * for it in turn). With a guard that tracks the work (the store's `checkNesting`), it fails at once instead,
 * as in the SQLite adapter.
 */
export const poolConn = (pool: pg.Pool, nesting: NestingGuard): Conn => ({
  query: (stmt, values) => pool.query(queryConfig(stmt, values)),
  unusable: (access) =>
    access === 'write' && nesting.inside()
      ? new Error('A top-level store was written inside a running transaction; use the stores it passes to its work.')
      : null,
});

/**
 * A transaction's client. Once the transaction has ended the client is back in the pool, serving someone
 * else: stores that escaped `work` (kept in a closure, used by a timer) fail instead of writing there.
 *
 * `begun` is the transaction's `BEGIN`, sent but not yet answered when work starts. The pool's connections
 * pipeline (`pipeline: true`), so a read can follow `BEGIN` on the wire without waiting for its answer: one
 * round trip instead of two for the read that starts most transactions. Only a read: should `BEGIN` fail, a
 * statement sent behind it runs on its own, outside any transaction. For a read that is harmless (its rows
 * are thrown away, and it answers with `BEGIN`'s failure); a write would commit alone. So a write waits for
 * `BEGIN`'s answer, and fails with it. `sendBegin` lets `BEGIN` out of the socket's buffer (see `holdWrites`):
 * together with the first read, in one system call, or at once before a first write.
 */
const txConn = (client: pg.PoolClient, scope: TxScope, begun: Promise<unknown>, sendBegin: () => void): Conn => {
  // A connection runs one statement at a time. Work may start several at once (independent reads combined
  // in parallel); they queue here, in call order, rather than in the driver (which, pipelining, would send
  // them all at once: a write behind a read that fails must not run).
  let tail: Promise<unknown> = Promise.resolve();
  // Once BEGIN is known to have failed, nothing more is sent: only a read already on its way went out alone.
  let beginFailed: { readonly error: unknown } | null = null;
  let beginAnswered = false;
  begun.then(
    () => void (beginAnswered = true),
    (error: unknown) => void ((beginAnswered = true), (beginFailed = { error })),
  );
  return {
    query: (stmt, values, access) => {
      // A write waits for BEGIN's answer, so BEGIN must be on its way first.
      if (access !== 'read') sendBegin();
      const turn = access === 'read' ? tail : Promise.all([tail, begun]);
      // Checked again when its turn comes: the transaction may have ended, or BEGIN failed, while it waited.
      const sent = turn.then(() => {
        const q =
          beginFailed !== null ? Promise.reject(beginFailed.error) : scope.active ? client.query(queryConfig(stmt, values)) : Promise.reject(ended());
        // The first read has joined BEGIN in the socket's buffer: both leave in one write.
        sendBegin();
        return q;
      });
      // A read that may go out behind BEGIN answers only once BEGIN has: if BEGIN failed, so does the read.
      // Once BEGIN has answered, reads need no such wait (the usual case, on the per-statement path).
      const next = access === 'read' && !beginAnswered ? sent.then((r) => begun.then(() => r)) : sent;
      tail = next.catch(() => undefined);
      return next;
    },
    unusable: () => (scope.active ? null : ended()),
  };
};

const ended = () => new Error('This transaction has ended; its stores can no longer be used.');

/**
 * Holds what is written to the client's socket in its buffer until `send` (idempotent) is called: the statements
 * written meanwhile leave together, in one system call. A driver without a socket stream writes at once.
 */
const holdWrites = (client: pg.PoolClient): { send: () => void } => {
  const stream = (client as unknown as pg.Client).connection?.stream as { cork?: () => void; uncork?: () => void } | undefined;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return { send: () => undefined };
  stream.cork();
  let held = true;
  return {
    send: () => {
      if (!held) return;
      held = false;
      stream.uncork!();
    },
  };
};

/**
 * The UnitOfWork over a pool. Each transaction takes a client of its own: `BEGIN` (READ COMMITTED), `work`
 * with stores bound to that client, then `COMMIT` on Right and `ROLLBACK` on Left or on a throw or
 * rejection (which becomes a StoreFailure). Transactions run side by side; the stores' statements take the
 * row locks and version checks that keep them from losing each other's writes. After a commit that
 * enqueued or revived a job, `onNewJobs` runs.
 */
export const createUnitOfWork = (
  pool: pg.Pool,
  bind: (conn: Conn) => Stores,
  onNewJobs: (kinds: NewJobKinds) => void,
  /** Where a transaction started inside another's work is refused (see poolConn); the same guard as poolConn's. */
  nesting: NestingGuard,
): UnitOfWork => ({
  transaction:
    <Err, A>(work: (tx: Stores) => TE.TaskEither<Err, A>, options?: TransactionOptions): TE.TaskEither<Err | StoreError, A> =>
    async () => {
      if (nesting.inside())
        return E.left(storeFailure(new Error('A transaction was started inside a running transaction; use the stores it passes to its work.')));
      const lockTimeoutMs = options?.lockTimeoutMs;
      if (lockTimeoutMs !== undefined && !(Number.isSafeInteger(lockTimeoutMs) && lockTimeoutMs >= 1))
        return E.left(storeFailure(new RangeError(`lockTimeoutMs must be a whole number of milliseconds, at least 1; got ${lockTimeoutMs}`)));
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (e) {
        return E.left(storeFailure(e));
      }
      // Set when the connection's state is unknown: the pool then closes it instead of lending it out.
      let discard = false;
      // The pool stops listening to a client's errors while it is lent out. A connection that dies meanwhile
      // (its backend terminated: a restart, a failover) emits 'error' on the client, which with no listener
      // would end the process. The statement waiting on it fails, and so does the transaction.
      const onError = () => void (discard = true);
      client.on('error', onError);
      // BEGIN waits in the socket's buffer (corked) until work's first statement joins it or another turn of
      // the event loop comes, whichever is first: BEGIN and a first read then leave in one system call.
      const begin = holdWrites(client);
      // Work whose first statement comes later (after other I/O), or never, does not hold BEGIN back.
      setImmediate(begin.send);
      try {
        // With a lock timeout, both in one simple-protocol message: one round trip, as a plain BEGIN. `SET LOCAL`
        // ends with the transaction, so the pooled connection goes back with the server's own setting. Not
        // awaited here: work's first read goes out behind it (txConn), and its answer is awaited below.
        const begun = client.query(
          lockTimeoutMs === undefined ? 'BEGIN ISOLATION LEVEL READ COMMITTED' : `BEGIN ISOLATION LEVEL READ COMMITTED; SET LOCAL lock_timeout = '${lockTimeoutMs}ms'`,
        );
        // Observed below, after work; until then only through the statements that wait for it.
        begun.catch(() => undefined);
        const scope: TxScope = { active: true };
        const newJobs = createNewJobKinds();
        const tx = noticingNewJobs(bind(txConn(client, scope, begun, begin.send)), newJobs.note);
        const outcome = await TE.tryCatch(
          () => nesting.run(scope, () => work(tx)()),
          (e) => storeFailure(e),
        )();
        scope.active = false;
        begin.send();
        try {
          await begun;
        } catch (e) {
          // The connection's state is unknown (in a transaction or not): it is closed, not rolled back.
          discard = true;
          return E.left(storeFailure(e));
        }
        const result: E.Either<Err | StoreError, A> = E.flattenW(outcome);
        if (E.isRight(result)) {
          try {
            const done = await client.query('COMMIT');
            // After a failed statement PostgreSQL has aborted the transaction, and COMMIT rolls it back
            // (reporting ROLLBACK, not an error): work that ignored that failure must not look committed.
            if (done.command !== 'COMMIT')
              return E.left(storeFailure(new Error('A statement in this transaction failed, so PostgreSQL rolled it back; nothing was committed.')));
            // This process's workers at once; other processes hear the NOTIFY the enqueue sent with the commit.
            const made = newJobs.taken();
            if (made !== null) onNewJobs(made);
            return result;
          } catch (e) {
            discard = true;
            return E.left(toStoreError(e));
          }
        }
        try {
          await client.query('ROLLBACK');
        } catch (e) {
          // A failed ROLLBACK leaves the connection unusable; that is the fault worth reporting.
          discard = true;
          return E.left(storeFailure(e));
        }
        return result;
      } finally {
        // Never lent out corked, whatever ended the transaction.
        begin.send();
        client.off('error', onError);
        client.release(discard);
      }
    },
});
