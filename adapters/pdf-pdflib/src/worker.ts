/**
 * The worker pool's entry: the default export runs one task on a worker thread. Results cross the thread
 * boundary as plain data — a failure as `{ failure }` (error classes do not survive structured cloning) —
 * and PDF bytes are moved, not copied. Compiled, this is `worker.js`; from sources, `worker-source.mjs`
 * loads it through tsx.
 */
import type { CertificateData, FieldProblem, FinishedDocumentInput, InspectLimits, PdfFacts, StampCheckInput } from '@esig/core';
import { move } from 'piscina';
import { buildCertificate } from './certificate.js';
import { buildFinished } from './finished.js';
import { inspectPdf, toInvalidDocument } from './inspector.js';
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
    (facts) => ({ facts }),
    (e: unknown) => ({ failure: toInvalidDocument(e).detail }),
  );

const bytesOrFailure = (build: Promise<Uint8Array>): Promise<BytesResult> =>
  build.then(
    (bytes) => move(bytes) as Uint8Array,
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

export default (task: PdfTask): Promise<PdfTaskResults[PdfTask['kind']]> => {
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
