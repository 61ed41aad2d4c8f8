import * as TE from '@esig/core/task-either';
import type { DocumentRenderer } from '@esig/core';
import { buildCertificate } from './certificate.js';
import { buildFinished } from './finished.js';
import { toRenderFailure } from './render-failure.js';

export { createPdfWorkerPool, workerEntry } from './pool.js';
export type { PdfWorkerPool, PdfWorkerPoolOptions } from './pool.js';
export { pdfLibInspector } from './inspector.js';
export { pdfLibStampPreflight } from './preflight.js';
export { TEST_MARK } from './page-space.js';
export { sanitizeForCharset } from './fonts.js';

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
