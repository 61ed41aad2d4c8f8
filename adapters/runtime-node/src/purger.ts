import * as E from 'fp-ts/lib/Either.js';
import type { StoreError } from '@esig/core';
import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { WorkerLogger } from './worker.js';

export interface PurgerOptions {
  /** What it purges, for the log (`idempotency records`). */
  readonly what: string;
  /** One batch: deletes at most `batch` expired rows and answers how many. */
  readonly purge: (batch: number) => TaskEither<StoreError, number>;
  readonly batch: number;
  /** Between the end of one run and the start of the next. The first run starts at once. */
  readonly intervalMs: number;
  readonly logger: Pick<WorkerLogger, 'info' | 'warn'>;
}

const causeOf = (e: StoreError): string | undefined => {
  if (e._tag !== 'StoreFailure') return undefined;
  const c = e.cause as { code?: unknown; message?: unknown } | null | undefined;
  const message = c instanceof Error || typeof c?.message === 'string' ? String(c!.message) : String(c);
  return typeof c?.code === 'string' ? `${c.code}: ${message}` : message;
};

export interface RunningPurger {
  /** No run starts after this; resolves when a batch under way has finished. */
  stop(): Promise<void>;
}

/**
 * Runs a purge now and then every `intervalMs`. A run repeats its batch while the batch comes back full, with
 * a turn of the event loop between batches, so that a large backlog never holds the process (on SQLite, its
 * one writer) for more than a batch at a time. A failed batch ends the run; the next run tries again.
 */
export const startPurger = (o: PurgerOptions): RunningPurger => {
  if (!Number.isSafeInteger(o.batch) || o.batch < 1) throw new RangeError(`batch must be a whole number of at least 1; got ${o.batch}`);
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> = Promise.resolve();
  const turn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const run = async () => {
    let total = 0;
    for (;;) {
      const r = await o.purge(o.batch)();
      if (E.isLeft(r)) {
        // The cause too, for an operator to act on (a lock timeout, a permission, a full disk): the drivers'
        // messages name statements and tables, never the values bound to them.
        o.logger.warn({ what: o.what, purged: total, error: r.left._tag, cause: causeOf(r.left) }, 'purge failed; it runs again later');
        return;
      }
      total += r.right;
      if (r.right < o.batch || stopped) break;
      await turn();
      // A stop() during the turn between batches starts no further batch.
      if (stopped) break;
    }
    if (total > 0) o.logger.info({ what: o.what, purged: total }, 'purged');
  };
  const schedule = (ms: number) => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = run()
        .catch((e: unknown) => o.logger.warn({ what: o.what, error: e instanceof Error ? e.message : String(e) }, 'purge failed; it runs again later'))
        .finally(() => schedule(o.intervalMs));
    }, ms);
    // Never what keeps a process alive.
    timer.unref();
  };
  schedule(0);
  return {
    stop: async () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      await running;
    },
  };
};
