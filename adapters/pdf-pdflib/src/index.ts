import * as TE from 'fp-ts/TaskEither';
import type { DocumentRenderer } from '@esig/core';
import { buildCertificate } from './certificate';
import { buildFinished } from './finished';
import { toRenderFailure } from './render-failure';

export { createPdfWorkerPool, workerEntry } from './pool';
export type { PdfWorkerPool, PdfWorkerPoolOptions } from './pool';
export { pdfLibInspector } from './inspector';
export { pdfLibStampPreflight } from './preflight';
export { TEST_MARK } from './page-space';
export { sanitizeForCharset } from './fonts';

/**
 * The finished document and the evidence certificate with pdf-lib, on the calling thread: standard fonts
 * for text, Dancing Script (embedded, subset) for typed signatures, drawn signatures as images. Every
 * failure is a RenderFailure. A server uses the worker pool's (`createPdfWorkerPool().renderer`) instead,
 * so that rendering never holds its event loop.
 */
export const pdfLibRenderer: DocumentRenderer = {
  renderFinished: (input) => TE.tryCatch(() => buildFinished(input), toRenderFailure),
  renderCertificate: (data, testMode) => TE.tryCatch(() => buildCertificate(data, testMode), toRenderFailure),
};
