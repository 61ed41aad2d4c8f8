import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import * as E from 'fp-ts/lib/Either.js';
import type * as TE from 'fp-ts/lib/TaskEither.js';
import { Piscina } from 'piscina';
import type { DocumentRenderer, InvalidDocument, PdfInspector, RenderFailure, ServerBusy, StampPreflight } from '@esig/core';
import { invalidDocument, serverBusy } from '@esig/core';
import type { PdfAnswer, PdfJob, PdfTask, PdfTaskResults, TaskFailure } from './worker.js';

export interface PdfWorkerPoolOptions {
  /** Worker threads at most. Default: one less than the machine's cores, at least one. */
  readonly threads?: number;
  /** How long an idle thread is kept before it exits (a new one starts on the next task). Default 60 s. */
  readonly idleTimeoutMs?: number;
  /**
   * Added to the threads' nice value (Unix), so that on a busy machine the event loop — answering
   * requests, renewing job leases — gets the CPU before PDF work does. Default 10; 0 keeps the process's.
   */
  readonly niceIncrement?: number;
  /**
   * How long an upload's inspection may run before its thread is stopped (and replaced) and the file refused.
   * A file of a few kilobytes can make pdf-lib's Flate decoder build lookup tables for minutes while producing
   * nothing, holding a thread every other upload waits for; an honest 500-page file takes well under a second.
   * Default 30 s.
   */
  readonly inspectTimeoutMs?: number;
  /**
   * How long an upload may wait for a thread before the pool gives up on it and answers `ServerBusy` (the client
   * may send it again later). Uploads queue behind one another and behind seals; without a limit a burst of them,
   * or a few files that each take `inspectTimeoutMs` to refuse, would keep every later upload, and its bytes,
   * waiting for minutes. Default 10 s.
   */
  readonly maxInspectWaitMs?: number;
  /**
   * The JavaScript heap a thread may grow to (V8's old generation), in MiB. A file a few kilobytes long can hold
   * an object stream of tens of millions of numbers, which pdf-lib makes into as many objects: without a limit the
   * process grew to 6 GB before the thread failed. With one, the thread stops at the limit (and is replaced), and
   * the task fails. Default 2048: a seal of 20 documents of 500 pages needs far less.
   */
  readonly maxHeapMb?: number;
  /**
   * pdf-lib keeps every name and object reference it ever makes on a thread, in tables capped at 2^24 entries:
   * past the cap every task on the thread fails, and until then they hold its heap. A thread whose tables pass
   * this many entries is replaced after its task. Honest files add their names and object numbers the thread has
   * not seen yet (a 100-page seal with its certificate: 446 the first time, none the next), a file made to fill
   * them millions. Default 1,048,576.
   */
  readonly maxInternedNames?: number;
}

/** Why an inspection was stopped: it ran past `inspectTimeoutMs`. */
class InspectionTimedOut extends Error {
  constructor(readonly limitMs: number) {
    super(`the inspection ran past ${limitMs} ms`);
  }
}

/** Why an inspection was not started: it waited past `maxInspectWaitMs` for a thread. */
class InspectionWaitedTooLong extends Error {
  constructor(readonly limitMs: number) {
    super(`the inspection waited more than ${limitMs} ms for a thread`);
  }
}

/** The `Retry-After` of an upload turned away because too many wait: about what one of them waits at most. */
const BUSY_RETRY_AFTER_S = 5;

/** The PDF ports, each running its work on a pool of worker threads. */
export interface PdfWorkerPool {
  readonly inspector: PdfInspector;
  readonly renderer: DocumentRenderer;
  readonly stamps: StampPreflight;
  /** Tasks handed to the pool and not yet answered (queued or running). */
  pending(): number;
  /** Stops the threads; tasks not yet answered fail. */
  close(): Promise<void>;
}

/** A worker entry: the module a thread loads, and the Node options it needs to load it. */
export interface WorkerEntry {
  readonly filename: string;
  readonly execArgv?: string[];
}

/**
 * Where the worker entry is: `worker.js` beside this module once compiled (plain Node), or, when running
 * from TypeScript sources, `worker-source.mjs` beside it, which loads `worker.ts` through tsx inside the
 * thread. Throws when the entry is missing, so a broken build fails at start rather than at the first
 * upload.
 */
export const workerEntry = (here: string = import.meta.url): WorkerEntry => {
  const fromSources = /\.[cm]?ts$/.test(new URL(here).pathname);
  const entry = new URL(fromSources ? './worker-source.mjs' : './worker.js', here);
  if (!existsSync(fileURLToPath(entry))) throw new Error(`The PDF worker entry ${fileURLToPath(entry)} is missing.`);
  // From sources, the thread's own imports of @esig/* packages must resolve to their sources too.
  return fromSources ? { filename: entry.href, execArgv: [...process.execArgv, '--conditions=@esig/source'] } : { filename: entry.href };
};

const isFailure = (r: unknown): r is TaskFailure => typeof r === 'object' && r !== null && 'failure' in r;
const renderFailure = (detail: string): RenderFailure => ({ _tag: 'RenderFailure', detail });
const crashed = (e: unknown) => `The PDF worker failed: ${e instanceof Error ? e.message : String(e)}`;

/**
 * Upload inspection, rendering of the finished PDF and the certificate, and the signing-time preflight,
 * each on a worker thread (piscina), so that the time a large or hostile PDF or image takes is never
 * taken from the event loop that answers requests. Threads start on demand and exit when idle.
 *
 * @example
 * const pdf = createPdfWorkerPool({ threads: 2 });
 * const facts = await pdf.inspector.inspect(bytes, { maxPages: 500 })();
 * await pdf.close();
 */
export const createPdfWorkerPool = (options: PdfWorkerPoolOptions = {}): PdfWorkerPool => poolOn(workerEntry(), options);

/** `createPdfWorkerPool` over a given worker entry (tests give one that cannot load). */
export const poolOn = (entry: WorkerEntry, options: PdfWorkerPoolOptions = {}): PdfWorkerPool => {
  const threads = options.threads ?? Math.max(1, availableParallelism() - 1);
  if (!Number.isInteger(threads) || threads < 1) throw new Error(`threads must be an integer ≥ 1 (got ${threads})`);
  const inspectTimeoutMs = options.inspectTimeoutMs ?? 30_000;
  const maxInspectWaitMs = options.maxInspectWaitMs ?? 10_000;
  // setTimeout takes at most 2^31 − 1 ms (and fires at once past it).
  if (!(maxInspectWaitMs >= 0 && maxInspectWaitMs <= 2 ** 31 - 1)) throw new Error(`maxInspectWaitMs must be from 0 to 2147483647 (got ${maxInspectWaitMs})`);
  const maxInterned = options.maxInternedNames ?? 1_048_576;
  /**
   * Each thread is a piscina of one thread, and this pool hands each a task only when it has none, so that a
   * thread can be replaced without failing a task: piscina gives a free thread its next queued task as soon as
   * it answers, so a thread it owns cannot be retired after its task without racing the task sent to it next.
   * And a thread's failure (a heap over its limit, an entry that does not load) touches that one task alone.
   */
  interface Slot {
    pool: Piscina<PdfJob, unknown>;
    /** The task it runs now. */
    running?: AbortController;
  }
  const slots: Slot[] = [];
  interface Waiting {
    readonly task: PdfTask;
    readonly resolve: (r: unknown) => void;
    readonly reject: (e: unknown) => void;
    /** An inspection's limit on its wait (other tasks come from jobs, which wait their turn). */
    timer?: ReturnType<typeof setTimeout>;
  }
  const waiting: Waiting[] = [];
  let closed = false;
  const newThread = (): Piscina<PdfJob, unknown> =>
    new Piscina<PdfJob, unknown>({
      filename: entry.filename,
      execArgv: entry.execArgv,
      minThreads: 0,
      maxThreads: 1,
      idleTimeout: options.idleTimeoutMs ?? 60_000,
      resourceLimits: { maxOldGenerationSizeMb: options.maxHeapMb ?? 2048 },
      // Through piscina's optional @napi-rs/nice; without it (an unusual platform) threads keep the priority.
      niceIncrement: process.platform === 'win32' ? 0 : (options.niceIncrement ?? 10),
    });
  /** Gives a slot a new thread. */
  const equip = (slot: Slot, pool: Piscina<PdfJob, unknown>) => {
    slot.pool = pool;
    // A thread that fails outside a task (its entry does not load, say) leaves piscina's task waiting for ever:
    // fail it instead, so a caller gets an error rather than a request that never ends.
    pool.on('error', (e: unknown) => {
      if (slot.pool === pool) slot.running?.abort(e);
    });
    return slot;
  };
  const newSlot = (): Slot => {
    const pool = newThread();
    return equip({ pool }, pool);
  };
  /** Threads being stopped after their slot got a new one: `close` waits for them too. */
  const stopping = new Set<Promise<void>>();
  /** Replaces a slot's thread (it has no task): the old one is stopped, the new one starts with its first task. */
  const replace = (slot: Slot) => {
    const old = slot.pool;
    if (!closed) equip(slot, newThread());
    const stopped = old.destroy().catch(() => undefined);
    stopping.add(stopped);
    void stopped.finally(() => stopping.delete(stopped));
  };
  const isAnswer = (a: unknown): a is PdfAnswer => typeof a === 'object' && a !== null && 'result' in a && 'retire' in a;
  const start = (slot: Slot, task: PdfTask, resolve: (r: unknown) => void, reject: (e: unknown) => void) => {
    const control = new AbortController();
    slot.running = control;
    // Aborting a running task terminates its thread; the slot then gets a new one.
    const timer = task.kind === 'inspect' ? setTimeout(() => control.abort(new InspectionTimedOut(inspectTimeoutMs)), inspectTimeoutMs) : undefined;
    slot.pool
      .run({ task, maxInterned }, { signal: control.signal })
      .then(
        // The task is settled first, whatever replacing its thread then does, so that it can never be left waiting.
        (a) => {
          if (!isAnswer(a)) {
            reject(new Error('the thread answered without saying whether to retire it'));
            replace(slot);
            return;
          }
          resolve(a.result);
          if (a.retire) replace(slot);
        },
        (e: unknown) => {
          // piscina rejects an aborted task with its own error: the reason is ours.
          reject(control.signal.reason instanceof InspectionTimedOut ? control.signal.reason : e);
          // Its thread failed, was stopped, or is being closed: a new one for the next task.
          replace(slot);
        },
      )
      .finally(() => {
        clearTimeout(timer);
        slot.running = undefined;
        next();
      });
  };
  /** Starts waiting tasks on free slots, making slots up to `threads`. */
  const next = () => {
    while (!closed && waiting.length > 0) {
      let slot = slots.find((s) => s.running === undefined);
      if (slot === undefined && slots.length < threads) {
        slot = newSlot();
        slots.push(slot);
      }
      if (slot === undefined) return;
      const w = waiting.shift()!;
      clearTimeout(w.timer);
      start(slot, w.task, w.resolve, w.reject);
    }
  };
  // The first slot is made now, without a thread (piscina starts one with its first task), so that options it
  // refuses fail here, as a single piscina's did, rather than every task.
  slots.push(newSlot());
  const run = <K extends PdfTask['kind']>(task: Extract<PdfTask, { kind: K }>): Promise<PdfTaskResults[K]> =>
    new Promise((resolve, reject) => {
      if (closed) return reject(new Error('the pool is closed'));
      const w: Waiting = { task, resolve: resolve as (r: unknown) => void, reject };
      waiting.push(w);
      next();
      if (task.kind === 'inspect' && waiting.includes(w))
        w.timer = setTimeout(() => {
          const at = waiting.indexOf(w);
          if (at < 0) return;
          waiting.splice(at, 1);
          reject(new InspectionWaitedTooLong(maxInspectWaitMs));
        }, maxInspectWaitMs);
    });
  /** Runs a task, mapping its answer with `ok`, a failure it reports with `failed`, a crash with `crashedAs`. */
  const task =
    <K extends PdfTask['kind'], L, A>(
      payload: Extract<PdfTask, { kind: K }>,
      ok: (r: Exclude<PdfTaskResults[K], TaskFailure>) => A,
      failed: (detail: string) => L,
      crashedAs: (e: unknown) => L,
    ): TE.TaskEither<L, A> =>
    () =>
      run<K>(payload).then(
        (r) => (isFailure(r) ? E.left(failed(r.failure)) : E.right(ok(r as Exclude<PdfTaskResults[K], TaskFailure>))),
        (e: unknown) => E.left(crashedAs(e)),
      );
  const asRenderFailure = (e: unknown) => renderFailure(crashed(e));
  return {
    inspector: {
      inspect: (bytes, limits) =>
        task(
          { kind: 'inspect', bytes, limits },
          (r) => r.facts,
          invalidDocument,
          // A thread that died on this file (out of memory, say) could not read it.
          (e: unknown): InvalidDocument | ServerBusy =>
            e instanceof InspectionWaitedTooLong
              ? serverBusy(`The server has too many uploads to read now; retry after ${BUSY_RETRY_AFTER_S} s.`, BUSY_RETRY_AFTER_S)
              : invalidDocument(
              e instanceof InspectionTimedOut
                ? `The PDF took too long to read (more than ${inspectTimeoutMs / 1000} s); its compressed streams may be built to be slow.`
                : 'The file could not be read as a PDF.',
            ),
        ),
    },
    renderer: {
      renderFinished: (input) => task({ kind: 'finished', input }, (r) => r, renderFailure, asRenderFailure),
      renderCertificate: (data, testMode) => task({ kind: 'certificate', data, testMode }, (r) => r, renderFailure, asRenderFailure),
    },
    stamps: {
      check: (input) => task({ kind: 'preflight', input }, (r) => r.problems, renderFailure, asRenderFailure),
    },
    pending: () => waiting.length + slots.filter((s) => s.running !== undefined).length,
    close: async () => {
      closed = true;
      for (const w of waiting.splice(0)) {
        clearTimeout(w.timer);
        w.reject(new Error('the pool is closed'));
      }
      await Promise.all([...slots.map((s) => s.pool.destroy()), ...stopping]);
    },
  };
};
