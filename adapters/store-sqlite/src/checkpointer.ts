import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { Worker } from 'node:worker_threads';

/**
 * How often the background checkpointer copies the WAL's new pages into the database file. Often enough
 * that each checkpoint is small; a checkpoint with nothing to copy does no I/O.
 */
export const CHECKPOINT_INTERVAL_MS = 100;

/**
 * The write connection's own automatic checkpoint, kept as a backstop only: it runs when the WAL holds
 * this many pages (40 MB at 4 KiB pages), which the background checkpointer never lets it reach while it
 * runs. SQLite's default is 1,000.
 */
export const BACKSTOP_AUTOCHECKPOINT_PAGES = 10_000;

/** Longest that stopping waits for the thread to close its connection (a checkpoint under way finishes first). */
const STOP_WAIT_MS = 10_000;

/**
 * The thread's code. CommonJS text, so it needs no file of its own beside the compiled module or the
 * TypeScript source; the driver is loaded by the path this module resolved, not from the thread's folder.
 * It sleeps on a shared flag rather than on a timer, so a stop wakes it at once; it says it has closed its
 * connection on a second flag, whatever happened before (even a driver that failed to load). Errors are
 * reported to the parent once each, never thrown: a checkpoint that fails now is tried again at the next
 * tick, and the backstop checkpoint remains meanwhile.
 */
const THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const state = new Int32Array(workerData.state);
let db = null;
try {
  const Database = require(workerData.driver);
  let last = '';
  for (;;) {
    // Sleeps for the interval, unless a checkpoint was asked for ([3]) meanwhile; a stop or a request wakes it.
    if (Atomics.load(state, 3) === 0) Atomics.wait(state, 0, 0, workerData.intervalMs);
    if (Atomics.load(state, 0) !== 0) break;
    Atomics.store(state, 3, 0);
    try {
      // Opened at the first tick, not at start: a store closed at once (a CLI command, a test) never opens one.
      if (db === null) {
        db = new Database(workerData.path, { timeout: 0, fileMustExist: true });
        db.pragma('synchronous = NORMAL');
      }
      db.pragma('wal_checkpoint(PASSIVE)');
      last = '';
    } catch (e) {
      const message = String((e && e.message) || e);
      if (message !== last) parentPort.postMessage({ error: message });
      last = message;
    }
    // One more checkpoint tried: whoever waits for one (checkpointed()) may go on.
    Atomics.add(state, 2, 1);
    Atomics.notify(state, 2);
  }
} catch (e) {
  parentPort.postMessage({ error: String((e && e.message) || e) });
} finally {
  try {
    if (db !== null) db.close();
  } finally {
    Atomics.store(state, 1, 1);
    Atomics.notify(state, 1);
  }
}
`;

/** `Atomics.waitAsync` (Node 16 and later), which the ES2022 library this package compiles against does not declare yet. */
interface AtomicsWithWaitAsync {
  waitAsync(array: Int32Array, index: number, value: number, timeoutMs: number): { readonly async: false; readonly value: string } | { readonly async: true; readonly value: Promise<string> };
}

export interface Checkpointer {
  /**
   * Stops the thread and waits (blocking, briefly: the checkpoint under way, if any) until it has closed its
   * connection, so that the store's own connections close after it and the last of them can checkpoint the
   * WAL and remove it, as without the thread.
   */
  stop(): void;
  /**
   * Has the thread checkpoint now (not at its next tick) and resolves once it has tried, or after `maxWaitMs`
   * (the thread stopped or busy): so a writer of much data at once can let the checkpoints keep up with it, and
   * the WAL restart from its beginning, instead of growing until the write connection's own backstop checkpoint
   * copies it all on the event loop.
   */
  checkpointed(maxWaitMs?: number): Promise<void>;
}

/**
 * Checkpoints the WAL of the database at `path` from a thread of its own. better-sqlite3 is synchronous, so
 * a checkpoint run by the write connection (SQLite's default, every 1,000 pages) stops the event loop for
 * its copy and its two fsyncs: 10–25 ms every few hundred milliseconds under load, which every request
 * waiting then pays. A PASSIVE checkpoint from another connection runs beside the writer and the readers
 * (it copies only what no reader still needs, and never waits for a lock), so the event loop only appends
 * to the WAL. SQLite restarts the WAL from its beginning once a checkpoint has copied all of it.
 */
export const startCheckpointer = (path: string, onError: (message: string) => void, intervalMs = CHECKPOINT_INTERVAL_MS): Checkpointer => {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  // [0]: set to 1 to ask the thread to stop; [1]: set to 1 by the thread once its connection is closed;
  // [2]: how many checkpoints the thread has tried; [3]: set to 1 to ask for one now.
  const shared = new SharedArrayBuffer(16);
  const state = new Int32Array(shared);
  // Resolved now: the thread must open the store's file even if the process changes its folder meanwhile.
  const thread = new Worker(THREAD, { eval: true, workerData: { path: resolve(path), driver, intervalMs, state: shared } });
  thread.on('message', (m: { error?: string }) => {
    if (typeof m.error === 'string') onError(m.error);
  });
  // A thread that died (it could not start, say) has no connection left to wait for.
  let gone = false;
  thread.on('error', (e) => onError(String(e)));
  thread.once('exit', () => (gone = true));
  // Never what keeps a process alive: a store left open must not stop a CLI from exiting. After the listeners:
  // adding a 'message' listener refs the thread again.
  thread.unref();
  return {
    stop: () => {
      Atomics.store(state, 0, 1);
      Atomics.notify(state, 0);
      if (!gone) Atomics.wait(state, 1, 0, STOP_WAIT_MS);
    },
    checkpointed: async (maxWaitMs = 1_000) => {
      if (gone || Atomics.load(state, 0) !== 0) return;
      const tried = Atomics.load(state, 2);
      Atomics.store(state, 3, 1);
      Atomics.notify(state, 0);
      // Waits without blocking the event loop; a checkpoint tried since the request (or any later) ends it.
      const waiting = (Atomics as unknown as AtomicsWithWaitAsync).waitAsync(state, 2, tried, maxWaitMs);
      if (waiting.async) await waiting.value;
    },
  };
};
