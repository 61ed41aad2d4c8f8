/**
 * The worker pool's entry: the default export runs one task on a worker thread. Results cross the thread
 * boundary as plain data — a failure as `{ failure }` (error classes do not survive structured cloning) —
 * and PDF bytes are moved, not copied. Compiled, this is `worker.js`; from sources, `worker-source.mjs`
 * loads it through tsx.
 */
import { createHash } from 'node:crypto';
import { getHeapStatistics } from 'node:v8';
import type { CertificateData, FieldProblem, FinishedDocumentInput, InspectLimits, PdfFacts, StampCheckInput } from '@esig/core';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { buildCertificate } from './certificate.js';
import { buildFinished } from './finished.js';
import { inspectPdf, toInvalidDocument } from './inspector.js';
import { internedEntries } from './interned.js';
import { checkStamps } from './preflight.js';
import { toRenderFailure } from './render-failure.js';

// pdf-lib says what it makes of an odd file on the console (`console.warn`: a number past 2^53, an object it could not
// parse), a line per occurrence. From a worker thread those lines land among the process's JSON log lines, one per
// number of an upload, where nothing reads them: what a file's oddities mean is the task's answer (a refusal or a
// failure), not a line. This module runs only on the pool's threads.
console.warn = () => undefined;

/** What a task answers when it could not do its work: the port's error detail. */
export interface TaskFailure {
  readonly failure: string;
}

export type InspectResult = { readonly facts: PdfFacts } | TaskFailure;
export type PreflightResult = { readonly problems: readonly FieldProblem[] } | TaskFailure;
/** A PDF (moved to the caller), or a failure. */
export type BytesResult = Uint8Array | TaskFailure;

const inspect = ({ bytes, limits }: { bytes: Uint8Array; limits: InspectLimits }): Promise<InspectResult> =>
  inspectPdf(bytes, limits).then(
    // The hash too, here: it grows with the file, and the API's thread need not compute it (PdfFacts.sha256).
    (facts) => ({ facts: { ...facts, sha256: createHash('sha256').update(bytes).digest('hex') } }),
    (e: unknown) => ({ failure: toInvalidDocument(e).detail }),
  );

const bytesOrFailure = (build: Promise<Uint8Array>): Promise<BytesResult> =>
  build.then(
    (bytes) => bytes,
    (e: unknown) => ({ failure: toRenderFailure(e).detail }),
  );

const preflight = (input: StampCheckInput): Promise<PreflightResult> =>
  checkStamps(input).then(
    (problems) => ({ problems }),
    (e: unknown) => ({ failure: toRenderFailure(e).detail }),
  );

/** One unit of PDF work, as the pool sends it. */
export type PdfTask =
  | { readonly kind: 'inspect'; readonly bytes: Uint8Array; readonly limits: InspectLimits }
  | { readonly kind: 'finished'; readonly input: FinishedDocumentInput }
  | { readonly kind: 'certificate'; readonly data: CertificateData; readonly testMode: boolean }
  | { readonly kind: 'preflight'; readonly input: StampCheckInput };

/** What each kind of task answers. */
export interface PdfTaskResults {
  readonly inspect: InspectResult;
  readonly finished: BytesResult;
  readonly certificate: BytesResult;
  readonly preflight: PreflightResult;
}

/** A task as the pool sends it: the work, and how many interned pdf-lib entries a thread may keep after it. */
export interface PdfJob {
  readonly task: PdfTask;
  readonly maxInterned: number;
}

/** A task's answer, and whether this thread should now be replaced (see interned.ts). */
export interface PdfAnswer<R = PdfTaskResults[PdfTask['kind']]> {
  readonly result: R;
  readonly retire: boolean;
}

const perform = (task: PdfTask): Promise<PdfTaskResults[PdfTask['kind']]> => {
  switch (task.kind) {
    case 'inspect':
      return inspect(task);
    case 'finished':
      return bytesOrFailure(buildFinished(task.input));
    case 'certificate':
      return bytesOrFailure(buildCertificate(task.data, task.testMode));
    case 'preflight':
      return preflight(task.input);
  }
};

/**
 * Whether what this thread's heap holds after a task is past half its limit. The tables count names, not their
 * length: a thousand names of 2,000 characters are a 6 KB upload that the thread then holds 4 MB of for good, so a
 * few hundred such uploads, each read and far below maxInterned, leave too little heap for an honest seal (the
 * seal of 20 documents of 500 pages leaves about 170 MB in use, against 2 GiB).
 */
const heapPastHalf = (): boolean => {
  const { used_heap_size, heap_size_limit } = getHeapStatistics();
  return used_heap_size > heap_size_limit / 2;
};

/**
 * Runs a task. A PDF it made is moved to the caller, not copied: piscina moves only an answer marked movable at
 * its top level, which here is the envelope (its value the answer, its transfer the PDF's buffer).
 */
export default async ({ task, maxInterned }: PdfJob): Promise<PdfAnswer | object> => {
  const result = await perform(task);
  const answer: PdfAnswer = { result, retire: internedEntries() > maxInterned || heapPastHalf() };
  return result instanceof Uint8Array ? move({ [transferableSymbol]: result.buffer, [valueSymbol]: answer }) : answer;
};
