import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import { PDFDocument, PDFName, PDFNumber } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AdoptedSignature, FinishedDocumentInput, PdfFacts } from '@esig/core';
import { makePdf, makeRepeatedPagePdf } from '@esig/testkit/pdf';
import { encodePng, hostileDrawnSignatures } from '@esig/testkit/png';
import type { PdfWorkerPool } from '../src/index.js';
import { createPdfWorkerPool, pdfLibInspector, pdfLibRenderer, pdfLibStampPreflight, workerEntry } from '../src/index.js';
import { poolOn } from '../src/pool.js';
import { certificateData, field } from './fixtures.js';

const run = promisify(execFile);
const right = async <A>(te: TaskEither<unknown, A>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(`expected Right, got ${JSON.stringify(r.left)}`);
  return r.right;
};

/** A signature as detailed as a pad allows: noise does not compress, so decoding and embedding it is real work. */
const heavySignature = (): AdoptedSignature => {
  const noise = (x: number, y: number) => (Math.imul(x + 1, 0x9e3779b1) ^ Math.imul(y + 7, 0x85ebca6b)) >>> 0;
  return { kind: 'drawn', value: `data:image/png;base64,${encodePng(1800, 600, noise, { filter: 'mixed' }).toString('base64')}` };
};

let pool: PdfWorkerPool;
let heavy: FinishedDocumentInput;
beforeAll(async () => {
  pool = createPdfWorkerPool({ threads: 1 });
  const bytes = await makePdf(300);
  heavy = {
    documents: [{ id: 'd', bytes }],
    fields: Array.from({ length: 300 }, (_, i) => field({ documentId: 'd', recipientId: 'ada', type: 'signature', page: i + 1, x: 72, y: 600, width: 300, height: 100 })),
    signatures: { ada: heavySignature() },
    testMode: true,
  };
});
afterAll(async () => {
  await pool.close();
});

/** Event-loop turns (setImmediate callbacks) of this thread that complete while `work` is pending. */
const turnsDuring = async (work: () => Promise<unknown>): Promise<number> => {
  let turns = 0;
  let done = false;
  const spin = () => {
    if (done) return;
    turns++;
    setImmediate(spin);
  };
  setImmediate(spin);
  await work();
  done = true;
  return turns;
};

describe('createPdfWorkerPool', () => {
  it('answers as the ports on the calling thread do, byte for byte', async () => {
    const bytes = await makePdf(3);
    // With the file's SHA-256 besides, computed on the thread (the calling thread need not).
    const withHash = (facts: E.Either<unknown, PdfFacts>, of: Uint8Array) => E.map((f: PdfFacts) => ({ ...f, sha256: createHash('sha256').update(of).digest('hex') }))(facts);
    expect(await pool.inspector.inspect(bytes, { maxPages: 10 })()).toEqual(withHash(await pdfLibInspector.inspect(bytes, { maxPages: 10 })(), bytes));
    const repeated = await makeRepeatedPagePdf(50);
    expect(await pool.inspector.inspect(repeated, { maxPages: 100 })()).toEqual(withHash(await pdfLibInspector.inspect(repeated, { maxPages: 100 })(), repeated));
    const input: FinishedDocumentInput = { ...heavy, documents: [{ id: 'd', bytes }], fields: heavy.fields.slice(0, 3), signatures: { ada: { kind: 'typed', value: 'Ada' } } };
    expect(Buffer.from(await right(pool.renderer.renderFinished(input))).equals(Buffer.from(await right(pdfLibRenderer.renderFinished(input))))).toBe(true);
    const data = certificateData(2);
    expect(Buffer.from(await right(pool.renderer.renderCertificate(data, true))).equals(Buffer.from(await right(pdfLibRenderer.renderCertificate(data, true))))).toBe(true);
    for (const url of Object.values(hostileDrawnSignatures()).slice(0, 3)) {
      const check = { signature: { kind: 'drawn' as const, value: url }, fields: [] };
      expect(await pool.stamps.check(check)()).toEqual(await pdfLibStampPreflight.check(check)());
    }
  });

  it('writes nothing of pdf-lib’s own warnings to the process’s output, whose lines are the JSON log', async () => {
    const doc = await PDFDocument.create();
    // A number past 2^53: pdf-lib's parser warns of it on the console ("Parsed number that is too large…").
    doc.addPage([612, 792]).node.set(PDFName.of('UserUnit'), PDFNumber.of(1e17));
    const bytes = await doc.save();
    const written: string[] = [];
    const spies = [process.stdout, process.stderr].map((stream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true)),
    );
    try {
      expect(E.isRight(await pool.inspector.inspect(bytes, { maxPages: 10 })())).toBe(true);
      // A worker thread's output reaches this thread's streams a turn or more later.
      await new Promise((ok) => setTimeout(ok, 200));
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    expect(written.join('')).not.toMatch(/too large|Trying to parse|Invalid object/);
  });

  it('stops an inspection that runs past inspectTimeoutMs, refuses the file, and goes on with a new thread', async () => {
    // A limit no inspection of 300 pages meets, for a file a hostile one stands for: the reviewer's 29 KB upload
    // kept pdf-lib's Flate decoder building lookup tables for 7 s, an 859 KB one for 217 s.
    const slow = createPdfWorkerPool({ threads: 1, inspectTimeoutMs: 1 });
    try {
      // The thread is started first (a render has no time limit), so that the limit stops the inspection and not the
      // thread's start: Node 20 was seen (once, in a review's 400 such stops) to abort the whole process when a thread
      // was terminated while still loading its entry.
      expect(E.isRight(await slow.renderer.renderCertificate(certificateData(1), true)())).toBe(true);
      expect(await slow.inspector.inspect(await makePdf(300), { maxPages: 500 })()).toEqual(
        E.left({ _tag: 'InvalidDocument', detail: 'The PDF took too long to read (more than 0.001 s); its compressed streams may be built to be slow.' }),
      );
      // The thread was stopped with its task; the render behind it runs on a new one.
      expect(E.isRight(await slow.renderer.renderCertificate(certificateData(1), true)())).toBe(true);
    } finally {
      await slow.close();
    }
  });

  it('stops a thread whose heap passes maxHeapMb, fails its task, and goes on with a new thread', async () => {
    // A PDF holding an array of three million numbers, each an object for pdf-lib: far past a 96 MiB heap, where
    // an ordinary file is inspected well within it.
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]).node.set(PDFName.of('Numbers'), doc.context.obj(Array.from({ length: 3_000_000 }, () => 0)));
    const small = createPdfWorkerPool({ threads: 1, maxHeapMb: 96 });
    try {
      expect(E.isRight(await small.inspector.inspect(await makePdf(3), { maxPages: 10 })())).toBe(true);
      expect(await small.inspector.inspect(await doc.save(), { maxPages: 10 })()).toEqual(E.left({ _tag: 'InvalidDocument', detail: 'The file could not be read as a PDF.' }));
      expect(E.isRight(await small.inspector.inspect(await makePdf(3), { maxPages: 10 })())).toBe(true);
    } finally {
      await small.close();
    }
  }, 120_000);

  it('reports failures as the port’s values: a refused upload, a render that fails', async () => {
    expect(await pool.inspector.inspect(new TextEncoder().encode('hello'), { maxPages: 10 })()).toEqual(E.left({ _tag: 'InvalidDocument', detail: 'The file is not a PDF.' }));
    const r = await pool.renderer.renderFinished({ documents: [], fields: [], signatures: {}, testMode: false })();
    expect(r).toEqual(E.left({ _tag: 'RenderFailure', detail: 'The request has no documents to finish.' }));
  });

  it('keeps the event loop turning while a heavy render runs, where rendering on it would hold it', async () => {
    // Rendering on this thread, the loop turns only where pdf-lib yields (a setTimeout every so many
    // objects; a few thousand times here), the CPU-bound stretches between them holding it; on a worker it
    // turns freely the whole time (about a million times here). Turns, not time, tell the two apart on any
    // machine: both counts scale with the machine's speed alike.
    const inThread = await turnsDuring(() => right(pdfLibRenderer.renderFinished(heavy)));
    let pendingSeen = 0;
    const onPool = await turnsDuring(async () => {
      const task = right(pool.renderer.renderFinished(heavy));
      pendingSeen = pool.pending();
      return task;
    });
    expect(pendingSeen).toBe(1);
    expect(pool.pending()).toBe(0);
    expect(onPool).toBeGreaterThan(10 * inThread);
  });

  it('settles every task once closed, and fails new ones at once, without hanging', async () => {
    const p = createPdfWorkerPool({ threads: 1 });
    const pending = p.renderer.renderFinished(heavy)();
    await p.close();
    await pending;
    expect(p.pending()).toBe(0);
    const after = await p.renderer.renderCertificate(certificateData(1), false)();
    expect(after).toEqual(E.left({ _tag: 'RenderFailure', detail: expect.stringMatching(/^The PDF worker failed/) }));
    expect(await p.inspector.inspect(await makePdf(1), { maxPages: 1 })()).toEqual(E.left({ _tag: 'InvalidDocument', detail: 'The file could not be read as a PDF.' }));
  });

  it('fails tasks, instead of leaving them waiting for ever, when a thread cannot load its entry', async () => {
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    const broken = poolOn({ filename: pathToFileURL(join(dir, 'broken.mjs')).href }, { threads: 1 });
    try {
      writeFileSync(join(dir, 'broken.mjs'), "throw new Error('cannot load');");
      const r = await broken.renderer.renderCertificate(certificateData(1), false)();
      expect(r).toEqual(E.left({ _tag: 'RenderFailure', detail: expect.stringMatching(/^The PDF worker failed/) }));
      expect(broken.pending()).toBe(0);
    } finally {
      await broken.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs its threads at a lower priority than the event loop (nice + 10)', async () => {
    // Linux: field 19 of a thread's stat is its nice value.
    const NICE = "Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1].split(' ')[16])";
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    // An entry that answers every task as an inspection whose page count is the thread's nice value.
    writeFileSync(join(dir, 'nice.mjs'), `import { readFileSync } from 'node:fs';\nexport default () => ({ result: { facts: { pageCount: ${NICE}, pageSizes: [] } }, retire: false });`);
    const probe = poolOn({ filename: pathToFileURL(join(dir, 'nice.mjs')).href }, { threads: 1 });
    try {
      const own = Number(readFileSync('/proc/thread-self/stat', 'utf8').split(') ')[1]!.split(' ')[16]);
      const r = await probe.inspector.inspect(new Uint8Array(1), { maxPages: 1 })();
      expect(r).toEqual(E.right({ pageCount: Math.min(own + 10, 19), pageSizes: [] }));
    } finally {
      await probe.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces a thread its task says to retire, after that task, failing none of the tasks queued behind it', async () => {
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    // An entry that answers every task as an inspection whose page count is its thread's id, and asks to be retired
    // when the upload's first byte is 1: what the real entry does once pdf-lib's tables pass maxInternedNames.
    writeFileSync(
      join(dir, 'retire.mjs'),
      "import { threadId } from 'node:worker_threads';\nexport default ({ task }) => ({ result: { facts: { pageCount: threadId, pageSizes: [] } }, retire: task.bytes[0] === 1 });",
    );
    const retiring = poolOn({ filename: pathToFileURL(join(dir, 'retire.mjs')).href }, { threads: 1 });
    const threadOf = async (first: number) => {
      const r = await retiring.inspector.inspect(new Uint8Array([first]), { maxPages: 1 })();
      if (E.isLeft(r)) throw new Error(`the task failed: ${r.left.detail}`);
      return r.right.pageCount;
    };
    try {
      // Queued together: piscina would have handed the second to the first's thread as soon as it answered.
      const [a, b, c, d] = await Promise.all([threadOf(1), threadOf(0), threadOf(1), threadOf(0)]);
      expect(b).not.toBe(a);
      expect(c).toBe(b);
      expect(d).not.toBe(c);
      expect(new Set([a, b, d]).size).toBe(3);
      expect(retiring.pending()).toBe(0);
    } finally {
      await retiring.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers ServerBusy to an upload that waits past maxInspectWaitMs for a thread, and keeps the seal queued with it', async () => {
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    const release = join(dir, 'release');
    // An entry that holds an upload whose first byte is 9 until the file `release` exists: a thread busy for as long as
    // the test says, as a slow hostile file or a long seal keeps it. Every task is answered with that byte.
    writeFileSync(
      join(dir, 'hold.mjs'),
      `import { existsSync } from 'node:fs';\nexport default async ({ task }) => {\n  const first = task.kind === 'inspect' ? task.bytes[0] : 0;\n  while (first === 9 && !existsSync(${JSON.stringify(release)})) await new Promise((ok) => setTimeout(ok, 5));\n  return { result: task.kind === 'inspect' ? { facts: { pageCount: first, pageSizes: [] } } : new Uint8Array([first]), retire: false };\n};`,
    );
    const held = poolOn({ filename: pathToFileURL(join(dir, 'hold.mjs')).href }, { threads: 1, maxInspectWaitMs: 50 });
    const within = <A>(p: Promise<A>) => Promise.race([p, new Promise<string>((ok) => setTimeout(() => ok('still waiting'), 10_000))]);
    try {
      const first = held.inspector.inspect(new Uint8Array([9]), { maxPages: 1 })();
      const second = held.inspector.inspect(new Uint8Array([1]), { maxPages: 1 })();
      const seal = held.renderer.renderCertificate(certificateData(1), false)();
      expect(await within(second)).toEqual(
        E.left({ _tag: 'ServerBusy', detail: 'The server has too many uploads to read now; retry after 5 s.', retryAfterS: 5 }),
      );
      // The upload that was running and the seal behind it are still there.
      expect(held.pending()).toBe(2);
      writeFileSync(release, '');
      expect(await within(first)).toEqual(E.right({ pageCount: 9, pageSizes: [] }));
      expect(await within(seal)).toEqual(E.right(new Uint8Array([0])));
      expect(held.pending()).toBe(0);
      // A thread that is free takes an upload at once, however short the limit.
      expect(await within(held.inspector.inspect(new Uint8Array([2]), { maxPages: 1 })())).toEqual(E.right({ pageCount: 2, pageSizes: [] }));
    } finally {
      await held.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses options its threads could not start with at once, as a single piscina did, rather than failing every task', () => {
    // A Piscina is made per slot when a task needs one: made lazily, bad options failed each task and left it counted.
    expect(() => createPdfWorkerPool({ idleTimeoutMs: -1 })).toThrow(/idleTimeout/);
    expect(() => createPdfWorkerPool({ niceIncrement: -1 })).toThrow(/niceIncrement/);
    expect(() => createPdfWorkerPool({ maxInspectWaitMs: -1 })).toThrow(/maxInspectWaitMs/);
    expect(() => createPdfWorkerPool({ maxInspectWaitMs: 2 ** 31 })).toThrow(/maxInspectWaitMs/);
  });

  it('fails a task whose thread answers something other than its envelope, rather than leaving it waiting for ever', async () => {
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    // An entry of another shape (an older worker.js beside a newer pool.js, say): the answer has no `retire`.
    writeFileSync(join(dir, 'bare.mjs'), 'export default () => undefined;');
    const bare = poolOn({ filename: pathToFileURL(join(dir, 'bare.mjs')).href }, { threads: 1 });
    try {
      const settled = await Promise.race([bare.renderer.renderCertificate(certificateData(1), false)(), new Promise((ok) => setTimeout(() => ok('still waiting'), 5_000))]);
      expect(settled).toEqual(E.left({ _tag: 'RenderFailure', detail: expect.stringMatching(/^The PDF worker failed/) }));
      expect(bare.pending()).toBe(0);
    } finally {
      await bare.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has stopped every thread once close() resolves, those it retired included', async () => {
    const threadsNow = () => readdirSync('/proc/self/task').length;
    const dir = mkdtempSync(join(fileURLToPath(new URL('../src/', import.meta.url)), '..', '.entry-'));
    writeFileSync(join(dir, 'retire.mjs'), 'export default () => ({ result: { facts: { pageCount: 1, pageSizes: [] } }, retire: true });');
    const before = threadsNow();
    const retiring = poolOn({ filename: pathToFileURL(join(dir, 'retire.mjs')).href }, { threads: 2 });
    try {
      await Promise.all([1, 2].map(() => retiring.inspector.inspect(new Uint8Array(1), { maxPages: 1 })()));
      await retiring.close();
      expect(threadsNow()).toBe(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a thread count that is not a positive integer', () => {
    for (const threads of [0, -1, 1.5]) expect(() => createPdfWorkerPool({ threads })).toThrow(/threads/);
  });
});

describe('workerEntry', () => {
  const src = new URL('../src/', import.meta.url);

  it('from TypeScript sources: the bootstrap that loads worker.ts through tsx inside the thread', () => {
    expect(workerEntry(new URL('pool.ts', src).href)).toEqual({
      filename: new URL('worker-source.mjs', src).href,
      // The thread's own imports of @esig/* packages resolve to their sources as well.
      execArgv: expect.arrayContaining(['--conditions=@esig/source']),
    });
  });

  it('compiled: worker.js beside the module, plain Node; a missing entry fails at once', () => {
    const dir = mkdtempSync(join(fileURLToPath(src), '..', '.entry-'));
    try {
      expect(() => workerEntry(pathToFileURL(join(dir, 'pool.js')).href)).toThrow(/worker\.js is missing/);
      writeFileSync(join(dir, 'worker.js'), '');
      expect(workerEntry(pathToFileURL(join(dir, 'pool.js')).href)).toEqual({ filename: pathToFileURL(join(dir, 'worker.js')).href });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs compiled: the built package (dist/, what npm installs) works in plain Node, no TypeScript loader anywhere', async () => {
    // `npm test` builds first (pretest). A script inside the repository resolves @esig/pdf-pdflib through its
    // exports map without the source condition: to dist/index.js, whose pool starts dist/worker.js.
    const root = fileURLToPath(new URL('../../../', import.meta.url));
    mkdirSync(join(root, 'node_modules', '.cache'), { recursive: true });
    const out = mkdtempSync(join(root, 'node_modules', '.cache', 'esig-pdf-compiled-'));
    try {
      const pdf = await makePdf(2);
      writeFileSync(join(out, 'pdf.bin'), pdf);
      writeFileSync(
        join(out, 'main.mjs'),
        `import { readFileSync } from 'node:fs';
         import { createPdfWorkerPool } from '@esig/pdf-pdflib';
         const pool = createPdfWorkerPool({ threads: 1 });
         const bytes = new Uint8Array(readFileSync(new URL('./pdf.bin', import.meta.url)));
         const facts = await pool.inspector.inspect(bytes, { maxPages: 10 })();
         const sig = { kind: 'typed', value: 'Ada Lovelace' };
         const field = { id: 'f', documentId: 'd', recipientId: 'r', type: 'signature', page: 1, x: 72, y: 72, width: 200, height: 50, required: true, value: true };
         const finished = await pool.renderer.renderFinished({ documents: [{ id: 'd', bytes }], fields: [field], signatures: { r: sig }, testMode: false })();
         const stamps = await pool.stamps.check({ signature: sig, fields: [field] })();
         await pool.close();
         console.log(JSON.stringify({ facts, finished: finished._tag === 'Right' ? finished.right.length : finished.left, stamps, execArgv: process.execArgv }));`,
      );
      const { stdout } = await run(process.execPath, [join(out, 'main.mjs')], { cwd: out, env: { ...process.env, NODE_OPTIONS: '' } });
      const r = JSON.parse(stdout);
      expect(r.facts).toEqual({ _tag: 'Right', right: { pageCount: 2, pageSizes: [{ width: 612, height: 792 }, { width: 612, height: 792 }], sha256: createHash('sha256').update(pdf).digest('hex') } });
      expect(r.finished).toBeGreaterThan(1000);
      expect(r.stamps).toEqual({ _tag: 'Right', right: [] });
      expect(r.execArgv).toEqual([]);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
