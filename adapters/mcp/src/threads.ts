import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { McpAnswer, McpCall } from './answer.js';
import type { ThreadReply, ThreadRequest } from './thread.js';

/** A thread entry: the module a thread loads, and the Node options it needs to load it. */
export interface ThreadEntry {
  readonly filename: string;
  readonly execArgv?: string[];
}

/**
 * Where the thread entry is: `thread.js` beside this module once compiled, or, from TypeScript sources,
 * `thread-source.mjs`, which loads `thread.ts` through tsx inside the thread. Throws when it is missing, so that
 * a broken build fails at start rather than at the first tool call.
 */
export const threadEntry = (here: string = import.meta.url): ThreadEntry => {
  const fromSources = /\.[cm]?ts$/.test(new URL(here).pathname);
  const entry = new URL(fromSources ? './thread-source.mjs' : './thread.js', here);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`The tool server's thread entry ${fileURLToPath(entry)} is missing.`);
  // From sources, the thread's own imports of @esig/* packages must resolve to their sources too.
  return fromSources ? { filename: entry.href, execArgv: [...process.execArgv, '--conditions=@esig/source'] } : { filename: entry.href };
};

/** Thrown for the calls a thread had when it stopped (an exception outside a call, a heap over its limit). */
export class McpThreadStopped extends Error {}

export interface McpThreads {
  answer(call: McpCall): Promise<McpAnswer>;
  /** Stops the threads; calls not yet answered fail with `McpThreadStopped`. */
  close(): Promise<void>;
}

export interface McpThreadsOptions {
  readonly threads: number;
  /** Each thread's heap limit, in MiB. */
  readonly maxHeapMb?: number;
  /**
   * A thread with calls in hand that answers no ping for this long is stuck (a loop that never ends, in a
   * library or in a bug of ours, on some input): it is stopped, its calls are answered 503, and the next call
   * starts a new one. Default 30 s: a real call's longest synchronous stretch (parsing a 40 MiB body) is well
   * under a second, and a call that waits on the API keeps its thread answering pings.
   */
  readonly stuckAfterMs?: number;
}

/** What the pool sends a thread to learn that its event loop still turns, and what the thread sends back. */
export interface ThreadPing {
  readonly ping: number;
}
export interface ThreadPong {
  readonly pong: number;
}

/**
 * Worker threads that answer `/mcp` calls. A thread starts at the first call that needs it and stays; each takes
 * many calls at once, and a call goes to the thread with the fewest in hand. A thread that stops fails its own calls
 * only, and the next call starts a new one.
 */
export const createMcpThreads = (entry: ThreadEntry, options: McpThreadsOptions): McpThreads => {
  if (!Number.isInteger(options.threads) || options.threads < 1) throw new Error(`threads must be an integer ≥ 1 (got ${options.threads})`);
  const stuckAfterMs = options.stuckAfterMs ?? 30_000;
  // setInterval takes at most 2^31 − 1 ms (a longer delay, Infinity among them, becomes 1 ms): a third of it, here.
  if (!(stuckAfterMs > 0 && stuckAfterMs <= 3 * (2 ** 31 - 1))) throw new Error(`stuckAfterMs must be positive and at most about 74 days (got ${stuckAfterMs})`);
  interface Slot {
    worker: Worker | null;
    readonly pending: Map<number, { resolve: (a: McpAnswer) => void; reject: (e: Error) => void }>;
    /**
     * The ping the thread has not answered yet, and when it was sent (`performance.now()`, a clock that does not
     * step): `null` when none is waiting. A thread is judged by a ping it left unanswered, never by how long ago it
     * last spoke: the pool's own event loop may have been held up (a long synchronous stretch, a pause of the whole
     * process) while the thread had nothing to answer, and the wall clock may step.
     */
    unanswered: { readonly ping: number; at: number } | null;
    /** Pings the thread while it has calls in hand. */
    watch: ReturnType<typeof setInterval> | null;
  }
  const slots: Slot[] = Array.from({ length: options.threads }, () => ({ worker: null, pending: new Map(), unanswered: null, watch: null }));
  let nextId = 0;
  // Numbered across every thread and watch: a late pong to an earlier watch's ping answers none of a later one's.
  let ping = 0;
  let closed = false;

  const unwatch = (slot: Slot) => {
    if (slot.watch !== null) clearInterval(slot.watch);
    slot.watch = null;
    slot.unanswered = null;
  };
  /**
   * Lets the slot's thread go, if it is still `worker`: its calls fail with `why`, and the next call starts a new
   * thread. Anything the thread says from now on is its own affair.
   */
  const letGo = (slot: Slot, worker: Worker, why: string) => {
    if (slot.worker !== worker) return;
    slot.worker = null;
    unwatch(slot);
    const failed = [...slot.pending.values()];
    slot.pending.clear();
    for (const p of failed) p.reject(new McpThreadStopped(why));
  };
  /**
   * While a thread has calls in hand, the pool pings it a few times per `stuckAfterMs`, one ping waiting at a time;
   * one that leaves a ping unanswered for longer is stopped. The check is made again after the event loop's poll
   * phase (`setImmediate`), where a pong already queued is delivered: this thread may itself have been held up, and
   * the thread not.
   */
  const watch = (slot: Slot, worker: Worker) => {
    if (slot.watch !== null) return;
    slot.unanswered = null;
    const stale = () => slot.unanswered !== null && performance.now() - slot.unanswered.at > stuckAfterMs;
    slot.watch = setInterval(() => {
      if (slot.unanswered === null) {
        slot.unanswered = { ping, at: performance.now() };
        return void worker.postMessage({ ping: ping++ } satisfies ThreadPing);
      }
      if (!stale()) return;
      setImmediate(() => {
        if (slot.worker !== worker || !stale()) return;
        // Let go at once, before it has stopped: a thread blocked in a system call (which terminating it does not
        // interrupt) stops only once the call returns, and no call must wait for that, nor be given to it meanwhile.
        letGo(slot, worker, `the tool server's thread answered nothing for ${stuckAfterMs / 1000} s, and was stopped`);
        void worker.terminate();
      });
    }, Math.max(1, Math.floor(stuckAfterMs / 3)));
    slot.watch.unref();
  };

  const start = (slot: Slot): Worker => {
    const worker = new Worker(new URL(entry.filename), {
      ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 2048 },
    });
    // An idle thread does not keep the process alive; a call in hand is kept alive by its HTTP request.
    worker.unref();
    // A thread's start (a new isolate, its modules loaded) is not a stuck event loop: counted from when it runs.
    worker.on('online', () => {
      if (slot.worker === worker && slot.unanswered !== null) slot.unanswered.at = performance.now();
    });
    worker.on('message', (m: ThreadReply | ThreadPong) => {
      if ('pong' in m) {
        if (slot.worker === worker && slot.unanswered !== null && m.pong >= slot.unanswered.ping) slot.unanswered = null;
        return;
      }
      const p = slot.pending.get(m.id);
      if (p === undefined) return;
      slot.pending.delete(m.id);
      if (slot.pending.size === 0) unwatch(slot);
      if ('answer' in m) p.resolve(m.answer);
      else p.reject(new Error(m.failed));
    });
    worker.on('error', (e) => letGo(slot, worker, `the tool server's thread failed: ${e.message}`));
    worker.on('exit', (code) => letGo(slot, worker, `the tool server's thread stopped (exit code ${code})`));
    slot.worker = worker;
    return worker;
  };

  return {
    answer: (call) => {
      if (closed) return Promise.reject(new McpThreadStopped('the tool server is closing'));
      const slot = slots.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
      const worker = slot.worker ?? start(slot);
      const id = nextId++;
      return new Promise<McpAnswer>((resolve, reject) => {
        if (slot.pending.size === 0) watch(slot, worker);
        slot.pending.set(id, { resolve, reject });
        // The body's bytes move to the thread (the caller's buffer is left empty): a 40 MiB body is not copied.
        const body = call.body.byteOffset === 0 && call.body.byteLength === call.body.buffer.byteLength ? call.body : call.body.slice();
        try {
          // An empty body moves nothing. (Node drops, without a word, a message whose transfer list holds a buffer
          // transferred already; cloned instead, such a body throws, and is refused below.)
          worker.postMessage({ id, call: { ...call, body } } satisfies ThreadRequest, body.byteLength > 0 ? [body.buffer as ArrayBuffer] : []);
        } catch (e) {
          // Not sent (a body whose buffer was transferred already, say): nothing will answer it, so nothing waits.
          slot.pending.delete(id);
          if (slot.pending.size === 0) unwatch(slot);
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    },
    close: async () => {
      closed = true;
      for (const s of slots) unwatch(s);
      await Promise.all(slots.map((s) => s.worker?.terminate()));
    },
  };
};
