import * as E from 'fp-ts/lib/Either.js';
import type { ApiLogEntry, TransactionOptions, UnitOfWork } from '@esig/core';
import type { Logger } from './deps.js';

export interface LogBuffer {
  add(entry: ApiLogEntry): void;
  /** Writes what is buffered now (and stops the timer when `final`). */
  flush(final?: boolean): Promise<void>;
}

/**
 * The most entries one transaction of the request log appends. On SQLite the append runs synchronously, on
 * the event loop that every request shares, at about 15 µs an entry: 400 entries (200 ms of a busy server)
 * held that loop for 6 to 12 ms, and every request that arrived meanwhile waited as long. At 50 a batch
 * takes under a millisecond, and the commits it adds (one per 50 requests) cost next to nothing.
 */
export const LOG_BATCH_MAX = 50;

/**
 * An append is one write through the transaction's stores and nothing else, so it may run again (SQLite's group
 * commit then runs the transactions after it in the same group without a savepoint each), and its write may
 * answer with the COMMIT (one round trip on PostgreSQL).
 */
const APPEND: TransactionOptions = { deferWrites: true, rerunnable: true };

/**
 * The request log, written off the request path: entries are buffered and appended in one transaction
 * every `intervalMs` or every `maxBatch` entries. The log is for reading what happened, not a record
 * anything depends on, so a crash may lose the last fraction of a second of it — and in exchange a logged
 * request costs no extra write of its own.
 */
export const createLogBuffer = (uow: UnitOfWork, logger: Logger, intervalMs = 200, maxBatch = LOG_BATCH_MAX): LogBuffer => {
  let pending: ApiLogEntry[] = [];
  let writing: Promise<void> = Promise.resolve();
  const write = () => {
    if (pending.length === 0) return writing;
    const batch = pending;
    pending = [];
    writing = writing.then(async () => {
      const r = await uow.transaction((tx) => tx.apiLog.append(batch), APPEND)();
      if (E.isLeft(r)) logger.warn({ error: r.left._tag, lost: batch.length }, 'request log batch not written');
    });
    return writing;
  };
  const timer = setInterval(() => void write(), intervalMs);
  timer.unref();
  return {
    add: (entry) => {
      pending.push(entry);
      if (pending.length >= maxBatch) void write();
    },
    flush: async (final = false) => {
      if (final) clearInterval(timer);
      await write();
    },
  };
};
