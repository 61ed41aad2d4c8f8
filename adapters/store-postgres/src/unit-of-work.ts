import type { NewJobKinds, StoreError, Stores, TransactionOptions, UnitOfWork } from '@esig/core';
import { createNewJobKinds, noticingNewJobs, storeFailure } from '@esig/core';
import type { NestingGuard } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from '@esig/core/task-either';
import type pg from 'pg';
import type { Conn, OnConflict } from './connection.js';
import { EarlierWriteFailed, queryConfig, sqlState, toStoreError } from './connection.js';
import type { BatchMember, BatchOutcome } from './statement-batch.js';
import { batchable, sendBatch } from './statement-batch.js';

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
  batchesReads: true,
  unusable: (access) =>
    access === 'write' && nesting.inside()
      ? new Error('A top-level store was written inside a running transaction; use the stores it passes to its work.')
      : null,
});

/** A transaction's client, as the stores and the unit of work see it. */
interface TxConn extends Conn {
  /** Resolves once every statement asked for so far is in the driver's hands (deferred writes unanswered). */
  handedOver(): Promise<void>;
  /** Once the deferred writes sent so far have answered: the first one's failure, or `null` when none failed. */
  deferredFailure(): Promise<StoreError | null>;
  /** Lets `BEGIN` out of the socket's buffer, if it is still there; deferred writes waiting stay. */
  sendBegin(): void;
  /** The transaction's `BEGIN` answered: resolves, or rejects with its failure. */
  readonly begun: Promise<unknown>;
  /**
   * Whether `BEGIN` still waits, unsent, at the head of the deferred writes: it then goes in one batch with them and
   * the `COMMIT` (or `ROLLBACK`), and is answered only then.
   */
  beginRides(): boolean;
  /**
   * Sends the deferred writes still waiting and the `COMMIT`, together with one Sync where it can (see
   * statement-batch.ts). Answers with the `COMMIT`'s command tag: `ROLLBACK` when PostgreSQL rolled the
   * transaction back instead, after a failed statement (`deferredFailure` then says which write failed). Rejects
   * when the `COMMIT`, or the `ROLLBACK` after a failed write, fails: the connection's state is then unknown.
   * `connectionLost`: the `COMMIT` answered, but the connection failed before the rest of its batch's answer
   * came (its ReadyForQuery): committed, on a connection whose state is unknown.
   */
  commit(): Promise<{ readonly command: string; readonly connectionLost?: true }>;
  /** Sends the deferred writes still waiting, then `ROLLBACK`. */
  rollback(): Promise<unknown>;
  /** Once the transaction has ended: lets `BEGIN` out, if it never went, and fails writes that never did. */
  close(): void;
}

/**
 * A transaction's client. Once the transaction has ended the client is back in the pool, serving someone
 * else: stores that escaped `work` (kept in a closure, used by a timer) fail instead of writing there.
 *
 * `BEGIN` goes out with work's first statement. The pool's connections pipeline (`pipeline: true`), so a read
 * can follow `BEGIN` on the wire without waiting for its answer: one round trip instead of two for the read that
 * starts most transactions. Only a read: should `BEGIN` fail, a statement sent behind it runs on its own, outside
 * any transaction. For a read that is harmless (its rows are thrown away, and it answers with `BEGIN`'s failure); a
 * write would commit alone. So a write waits for `BEGIN`'s answer, and fails with it. `BEGIN` waits in the
 * socket's buffer (see `holdWrites`) until `sendBegin`: together with the first read, in one system call, or at
 * once before a first write. A transaction whose first statement is a deferred write (a worker's record) sends
 * `BEGIN` in the batch of its writes instead (below): a batch skips everything after a failed statement, so no
 * write there can run outside the transaction, and `BEGIN` needs no round trip of its own.
 *
 * In a transaction run with `deferWrites`, a deferred write (`deferWrite`, the stores' `write`) goes out like a
 * write but nobody waits for its answer: whatever comes next, a statement or the `COMMIT`, follows it on the
 * wire at once, so consecutive writes and the `COMMIT` after them share one round trip. A deferred write fails,
 * if it fails, with an error from PostgreSQL, and PostgreSQL runs a connection's statements in order and
 * refuses every statement after a failed one until the transaction ends: nothing after it takes effect, and
 * the `COMMIT` rolls back. The transaction then fails with the write's own error, and so does a statement
 * refused after it (`EarlierWriteFailed`), as they would had the write been waited for. Consecutive deferred
 * writes, and the `COMMIT` when it follows them, go as one batch with one Sync (statement-batch.ts): PostgreSQL
 * answers them once, and skips what follows a failed one, the `COMMIT` too; `commit` then rolls back.
 */
const txConn = (client: pg.PoolClient, scope: TxScope, begin: TxBegin, deferring: boolean): TxConn => {
  // A connection runs one statement at a time. Work may start several at once (independent reads combined
  // in parallel); they queue here, in call order, rather than in the driver (which, pipelining, would send
  // them all at once: a write behind a read that fails must not run). A deferred write holds the queue only
  // until it is in the driver's hands.
  let tail: Promise<unknown> = Promise.resolve();
  // BEGIN's answer, however it goes out: as a query of its own (`startBegin`) or at the head of a batch.
  const { answer: begun, settle: answerBegin } = laterAnswer();
  // Observed through the statements that wait for it, and by the unit of work.
  begun.catch(() => undefined);
  // Once BEGIN is known to have failed, nothing more is sent: only a read already on its way went out alone.
  let beginFailed: { readonly error: unknown } | null = null;
  let beginAnswered = false;
  begun.then(
    () => void (beginAnswered = true),
    (error: unknown) => void ((beginAnswered = true), (beginFailed = { error })),
  );
  // What each deferred write came to, in the order they were sent (never rejected).
  const deferred: Array<Promise<StoreError | null>> = [];
  // How BEGIN goes: not yet; as a query of its own; or at the head of the deferred writes' batch.
  let beginWay: 'unsent' | 'query' | 'batch' = 'unsent';
  // While true, BEGIN waits unsent at the head of `waiting`, and a deferred write may join it there at once (no
  // statement of any other kind has been asked for since, so none can be overtaken).
  let beginWaits = false;
  // BEGIN as a query, held in the socket's buffer until the first statement joins it (or the next turn of the event loop).
  let held: { send: () => void } | null = null;
  const startBegin = () => {
    if (beginWay !== 'unsent') return;
    beginWay = 'query';
    held = holdWrites(client);
    answerBegin(client.query(begin.text));
  };
  /** Starts BEGIN as a query if nothing has started it, and lets it out of the socket's buffer. Once BEGIN heads a batch, nothing to do. */
  const sendBegin = () => {
    startBegin();
    const h = held;
    held = null;
    h?.send();
  };
  // Deferred writes in the driver's hands as far as work can tell, but not yet sent: they leave together, with
  // one Sync (statement-batch.ts), ahead of the next statement, the COMMIT or the next turn of the event loop.
  let waiting: Waiting[] = [];
  /** Sends the waiting writes, then (in the same system call) whatever `then` sends. */
  const sendWaiting = <A>(then: () => A): A => {
    if (waiting.length === 0) return then();
    const members = waiting;
    waiting = [];
    // BEGIN at their head: they go as a batch whatever else (each member was batchable when it joined), since only a
    // batch keeps the writes from running should BEGIN fail.
    const headed = beginWaits;
    beginWaits = false;
    const hold = holdWrites(client);
    try {
      if (headed || (members.length > 1 && batchable(client, members))) void sendBatch(client, members).then((outcome) => settleMembers(members, outcome));
      // A write whose prepared statement this connection has not parsed yet goes as the driver sends it, with a Sync
      // of its own; the next time it is parsed.
      else for (const m of members) m.settle(client.query(queryConfig(m.stmt, m.values)));
      return then();
    } finally {
      hold.send();
    }
  };
  /** Lets out of the socket's buffer whatever waits: deferred writes, and BEGIN. */
  const flush = () => {
    sendWaiting(() => undefined);
    sendBegin();
  };
  // Work whose first statement comes later (after other I/O), or never, does not hold BEGIN back.
  setImmediate(sendBegin);
  /** The first failure among the first `count` deferred writes, once they have answered. */
  const failureAmong = async (count: number): Promise<StoreError | null> => {
    for (const outcome of deferred.slice(0, count)) {
      const failed = await outcome;
      if (failed !== null) return failed;
    }
    return null;
  };
  /**
   * What a deferred write that failed reports. Refused (25P02) because a statement before it failed: that statement's
   * failure is the one to report (an earlier deferred write's, or one work has seen itself, or BEGIN's), not this refusal.
   */
  const outcomeOf = (after: number, onConflict: OnConflict | undefined) => async (e: unknown) =>
    (await failureAmong(after)) ?? (sqlState(e) === IN_FAILED_TRANSACTION ? null : toStoreError(e, onConflict));
  /** A statement sent after `count` deferred writes fails with the first of their failures, if one failed. */
  const blame = (count: number) => async (e: unknown) => {
    const earlier = await failureAmong(count);
    throw earlier !== null ? new EarlierWriteFailed(earlier) : e;
  };
  return {
    query: (stmt, values, access) => {
      // From here on, deferred writes queue behind this statement, not ahead of it.
      const beginWaited = beginWaits;
      beginWaits = false;
      // BEGIN goes ahead of this statement on the wire. A write waits for BEGIN's answer, so BEGIN must be on its way
      // first (with the deferred writes it heads, when it heads them).
      if (access !== 'read') {
        if (beginWaited) flush();
        else sendBegin();
      } else startBegin();
      const after = deferred.length;
      const turn = access === 'read' ? tail : Promise.all([tail, begun]);
      // Checked again when its turn comes: the transaction may have ended, or BEGIN failed, while it waited.
      const sent = turn.then(() => {
        const q =
          beginFailed !== null
            ? Promise.reject(beginFailed.error)
            : scope.active
              ? sendWaiting(() => client.query(queryConfig(stmt, values)))
              : Promise.reject(ended());
        // The first read has joined BEGIN in the socket's buffer: both leave in one write.
        sendBegin();
        return q;
      });
      // A read that may go out behind BEGIN answers only once BEGIN has: if BEGIN failed, so does the read.
      // Once BEGIN has answered, reads need no such wait (the usual case, on the per-statement path).
      const answered = access === 'read' && !beginAnswered ? sent.then((r) => begun.then(() => r)) : sent;
      const next = after === 0 ? answered : answered.catch(blame(after));
      tail = next.catch(() => undefined);
      return next;
    },
    unusable: () => (scope.active ? null : ended()),
    deferWrite: (stmt, values, onConflict) => {
      // Only for work that stops at a failed write (`deferWrites`): other work may go on past one, and must
      // hear of it before it does. And only values the driver cannot fail to encode: a value it refuses never
      // reaches the server, which would not abort the transaction, and the COMMIT behind it would commit.
      if (!deferring || !values.every(encodable)) return false;
      const after = deferred.length;
      // Work's first statement, or one more deferred write behind it, and one a batch can carry: it joins BEGIN in
      // the batch at once. Should BEGIN fail there, PostgreSQL skips the rest of the batch: it cannot run alone.
      if ((beginWay === 'unsent' || beginWaits) && batchable(client, [{ stmt, values }])) {
        if (beginWay === 'unsent') {
          beginWay = 'batch';
          beginWaits = true;
          const parts = begin.members.map(laterAnswer);
          answerBegin(Promise.all(parts.map((p) => p.answer)));
          waiting.push(...begin.members.map((m, i) => ({ ...m, settle: parts[i]!.settle })));
          setImmediate(flush);
        }
        const { answer, settle } = laterAnswer();
        waiting.push({ stmt, values, settle });
        deferred.push(answer.then(() => null, outcomeOf(after, onConflict)));
        return true;
      }
      // It waits for BEGIN's answer, so BEGIN must be on its way first (with the writes it heads, if it heads them).
      const beginWaited = beginWaits;
      beginWaits = false;
      if (beginWaited) flush();
      else sendBegin();
      // Handed to the driver once its turn comes, after BEGIN has answered; wrapped, so that `handed`
      // resolves then rather than with the answer. It was accepted while the transaction ran: the unit of work
      // waits for it to be handed over before it ends the transaction.
      const handed = Promise.all([tail, begun]).then(() => {
        // Waits until the next statement, the COMMIT or the next turn of the event loop.
        if (waiting.length === 0) setImmediate(flush);
        const { answer, settle } = laterAnswer();
        waiting.push({ stmt, values, settle });
        return { answer };
      });
      tail = handed.catch(() => undefined);
      deferred.push(
        handed
          .then(({ answer }) => answer)
          .then(() => null, outcomeOf(after, onConflict)),
      );
      return true;
    },
    handedOver: async () => {
      // Statements asked for while this waited are waited for too.
      for (let t = tail; ; t = tail) {
        await t;
        if (t === tail) return;
      }
    },
    deferredFailure: () => failureAmong(deferred.length),
    sendBegin,
    begun,
    beginRides: () => beginWaits,
    commit: async () => {
      // The COMMIT always goes as (the end of) a batch, even alone: a batch tells its COMMIT's answer apart from the
      // ReadyForQuery behind it, so a connection lost between the two is known to have committed. A query resolves
      // only at the ReadyForQuery, and would report that loss as a failure.
      sendBegin();
      beginWaits = false;
      const together = batchable(client, [...waiting, COMMIT]);
      const members = together ? waiting : [];
      // Writes whose prepared statements this connection has not parsed yet go first, each with a Sync of its own,
      // in the same system call as the COMMIT's batch.
      const hold = together ? null : holdWrites(client);
      if (!together) sendWaiting(() => undefined);
      waiting = [];
      const all = [...members, COMMIT];
      const sent = sendBatch(client, all);
      hold?.send();
      const outcome = await sent;
      settleMembers(members, outcome);
      if (outcome.failedAt === null) return { command: outcome.commands[members.length]! };
      // The COMMIT's own answer came, and then the connection failed (the query timeout, a reset) before the batch's
      // ReadyForQuery: the outcome is known, the connection's state is not. No ROLLBACK: it would fail, and the
      // transaction would be reported failed though PostgreSQL committed it.
      if (outcome.commands.length > members.length) return { command: outcome.commands[members.length]!, connectionLost: true };
      if (outcome.failedAt === members.length) throw outcome.error;
      // A write failed, and PostgreSQL skipped the rest up to the Sync, the COMMIT too: the transaction is still
      // open, aborted. A COMMIT sent alone would have answered ROLLBACK; this does the same.
      return client.query('ROLLBACK');
    },
    rollback: () => {
      const rolledBack = sendWaiting(() => client.query('ROLLBACK'));
      sendBegin();
      return rolledBack;
    },
    close: () => {
      sendBegin();
      // None should wait here (the unit of work waits for them to be handed over, then sends them with its COMMIT or
      // ROLLBACK); should one, it must not go out now, outside the transaction, where it would commit alone.
      for (const m of waiting.splice(0)) m.settle(Promise.reject(ended()));
    },
  };
};

/** A statement's answer, to come once it is sent: `settle` hands it the driver's (or a batch's) promise. */
const laterAnswer = (): { readonly answer: Promise<unknown>; readonly settle: (answer: Promise<unknown>) => void } => {
  let settle!: (answer: Promise<unknown>) => void;
  const answer = new Promise<unknown>((resolve) => (settle = resolve));
  return { answer, settle };
};

/** A deferred write not yet sent, and how to tell it how its statement answered. */
interface Waiting extends BatchMember {
  readonly settle: (answer: Promise<unknown>) => void;
}

const COMMIT: BatchMember = { stmt: 'COMMIT', values: [] };

/** A transaction's `BEGIN`: as one simple query, or as the statements that head a batch (one each). */
interface TxBegin {
  readonly text: string;
  readonly members: readonly BatchMember[];
}

const BEGIN = 'BEGIN ISOLATION LEVEL READ COMMITTED';

/**
 * With a lock timeout, `BEGIN` and `SET LOCAL` in one simple-protocol message (one round trip, as a plain `BEGIN`), or
 * two members of a batch. `SET LOCAL` ends with the transaction, so the pooled connection goes back with the server's
 * own setting.
 */
const txBegin = (lockTimeoutMs: number | undefined): TxBegin => {
  if (lockTimeoutMs === undefined) return { text: BEGIN, members: [{ stmt: BEGIN, values: [] }] };
  const set = `SET LOCAL lock_timeout = '${lockTimeoutMs}ms'`;
  return { text: `${BEGIN}; ${set}`, members: [{ stmt: BEGIN, values: [] }, { stmt: set, values: [] }] };
};

/**
 * Tells each member of a batch how it answered: those before the failed one ran, the failed one failed, and those
 * after it were skipped, as PostgreSQL refuses a statement after a failed one in the same transaction (25P02).
 */
const settleMembers = (members: readonly Waiting[], outcome: BatchOutcome) =>
  members.forEach((m, i) =>
    m.settle(
      outcome.failedAt === null || i < outcome.failedAt
        ? Promise.resolve()
        : Promise.reject(i === outcome.failedAt ? outcome.error : skipped()),
    ),
  );

const skipped = () => Object.assign(new Error('skipped: a statement before it in its batch failed'), { code: IN_FAILED_TRANSACTION });

const ended = () => new Error('This transaction has ended; its stores can no longer be used.');

/** PostgreSQL's refusal of a statement after a failed one, until the transaction ends. */
const IN_FAILED_TRANSACTION = '25P02';

const scalar = (v: unknown) => v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));

/** A statement value node-postgres encodes without fail: a scalar, or an array of them. */
const encodable = (v: unknown): boolean => scalar(v) || (Array.isArray(v) && v.every(scalar));

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
      let conn: TxConn | undefined;
      try {
        // BEGIN goes out with work's first statement (txConn): in one system call with a first read, or in one batch
        // with first deferred writes. Its answer is awaited below.
        const scope: TxScope = { active: true };
        const newJobs = createNewJobKinds();
        conn = txConn(client, scope, txBegin(lockTimeoutMs), options?.deferWrites === true);
        const tx = noticingNewJobs(bind(conn), newJobs.note);
        const outcome = await TE.tryCatch(
          () => nesting.run(scope, () => work(tx)()),
          (e) => storeFailure(e),
        )();
        scope.active = false;
        conn.sendBegin();
        // Deferred writes still on their way to the driver go before the COMMIT or ROLLBACK, never after it.
        await conn.handedOver();
        // A BEGIN that heads the deferred writes, unsent, is answered with them and the COMMIT or ROLLBACK: looked at after.
        const beginRides = conn.beginRides();
        /** BEGIN failed: the connection's state is unknown (in a transaction or not), so it is closed, not rolled back. */
        const beginFailure = async (): Promise<E.Either<StoreError, never> | null> => {
          try {
            await conn!.begun;
            return null;
          } catch (e) {
            discard = true;
            return E.left(storeFailure(e));
          }
        };
        if (!beginRides) {
          const failed = await beginFailure();
          if (failed !== null) return failed;
        }
        const result: E.Either<Err | StoreError, A> = E.flattenW(outcome);
        if (E.isRight(result)) {
          // Behind the deferred writes, unanswered: they fail, if they fail, with an error of PostgreSQL's,
          // which then refuses the rest, and the COMMIT rolls back. The writes and the COMMIT leave in one
          // system call, one round trip.
          const committing = conn.commit();
          const [failed, done] = await Promise.allSettled([conn.deferredFailure(), committing]);
          const writeFailed = failed.status === 'fulfilled' ? failed.value : storeFailure(failed.reason);
          if (beginRides) {
            const beginFailed = await beginFailure();
            if (beginFailed !== null) return beginFailed;
          }
          if (done.status === 'rejected') {
            discard = true;
            return E.left(writeFailed ?? toStoreError(done.reason));
          }
          if (done.value.connectionLost === true) discard = true;
          const committed = done.value.command === 'COMMIT';
          // A write that failed aborted the transaction, and the COMMIT rolled it back. (Had it committed, a
          // store's `raising` form would not have raised where it failed: a fault, reported as one.)
          if (writeFailed !== null)
            return E.left(committed ? storeFailure(new Error(`A deferred write failed (${writeFailed._tag}), yet its transaction committed.`)) : writeFailed);
          // After a failed statement PostgreSQL has aborted the transaction, and COMMIT rolls it back
          // (reporting ROLLBACK, not an error): work that ignored that failure must not look committed.
          if (!committed)
            return E.left(storeFailure(new Error('A statement in this transaction failed, so PostgreSQL rolled it back; nothing was committed.')));
          // This process's workers at once; other processes hear the NOTIFY the enqueue sent with the commit.
          const made = newJobs.taken();
          if (made !== null) onNewJobs(made);
          return result;
        }
        const rollingBack = conn.rollback();
        // Both observed at once: a ROLLBACK that fails while the writes' answers are awaited is not left unheard.
        const [failed, rolledBack] = await Promise.allSettled([conn.deferredFailure(), rollingBack]);
        if (beginRides) {
          const beginFailed = await beginFailure();
          if (beginFailed !== null) return beginFailed;
        }
        if (rolledBack.status === 'rejected') {
          // A failed ROLLBACK leaves the connection unusable; that is the fault worth reporting.
          discard = true;
          return E.left(storeFailure(rolledBack.reason));
        }
        // A deferred write that failed came before whatever failed work: its error is the one work would have
        // stopped at, had it waited for the answer.
        const writeFailed = failed.status === 'fulfilled' ? failed.value : storeFailure(failed.reason);
        return writeFailed !== null ? E.left(writeFailed) : result;
      } finally {
        // Never lent out corked, whatever ended the transaction (BEGIN's hold too, should txConn never have
        // taken it over).
        conn?.close();
        client.off('error', onError);
        client.release(discard);
      }
    },
});
