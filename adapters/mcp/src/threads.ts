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
}

/**
 * Worker threads that answer `/mcp` calls. A thread starts at the first call that needs it and stays; each takes
 * many calls at once, and a call goes to the thread with the fewest in hand. A thread that stops fails its own calls
 * only, and the next call starts a new one.
 */
export const createMcpThreads = (entry: ThreadEntry, options: McpThreadsOptions): McpThreads => {
  if (!Number.isInteger(options.threads) || options.threads < 1) throw new Error(`threads must be an integer ≥ 1 (got ${options.threads})`);
  interface Slot {
    worker: Worker | null;
    readonly pending: Map<number, { resolve: (a: McpAnswer) => void; reject: (e: Error) => void }>;
  }
  const slots: Slot[] = Array.from({ length: options.threads }, () => ({ worker: null, pending: new Map() }));
  let nextId = 0;
  let closed = false;

  const start = (slot: Slot): Worker => {
    const worker = new Worker(new URL(entry.filename), {
      ...(entry.execArgv ? { execArgv: entry.execArgv } : {}),
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 2048 },
    });
    // An idle thread does not keep the process alive; a call in hand is kept alive by its HTTP request.
    worker.unref();
    worker.on('message', (m: ThreadReply) => {
      const p = slot.pending.get(m.id);
      if (p === undefined) return;
      slot.pending.delete(m.id);
      if ('answer' in m) p.resolve(m.answer);
      else p.reject(new Error(m.failed));
    });
    const stopped = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      const failed = [...slot.pending.values()];
      slot.pending.clear();
      for (const p of failed) p.reject(new McpThreadStopped(why));
    };
    worker.on('error', (e) => stopped(`the tool server's thread failed: ${e.message}`));
    worker.on('exit', (code) => stopped(`the tool server's thread stopped (exit code ${code})`));
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
          reject(e instanceof Error ? e : new Error(String(e)));
        }
      });
    },
    close: async () => {
      closed = true;
      await Promise.all(slots.map((s) => s.worker?.terminate()));
    },
  };
};
