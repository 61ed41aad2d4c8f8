import * as TE from 'fp-ts/TaskEither';
import { PDFDocument } from 'pdf-lib';
import type { PdfFacts, PdfInspector } from '@esig/core';
import { invalidDocument } from '@esig/core';

const PDF_MAGIC = '%PDF-';

/** A refusal whose message is meant for the client (as opposed to a parser's internal message). */
class Refusal extends Error {}

/** Upload inspection with pdf-lib: the header, a full parse, no encryption, at least one page. */
export const pdfLibInspector: PdfInspector = {
  inspect: (bytes) =>
    TE.tryCatch(
      async (): Promise<PdfFacts> => {
        // pdf-lib accepts a header anywhere in the first kilobyte; we insist on it at the start, where
        // every conforming writer puts it.
        const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
        if (!head.trimStart().startsWith(PDF_MAGIC)) throw new Refusal('The file is not a PDF.');
        // Loading with ignoreEncryption and then asking is more robust than matching pdf-lib's error
        // classes, which are ES5-compiled and fail `instanceof`.
        const doc = await PDFDocument.load(bytes, { updateMetadata: false, throwOnInvalidObject: true, ignoreEncryption: true });
        if (doc.isEncrypted) throw new Refusal('The PDF is encrypted; upload an unprotected copy.');
        const pageCount = doc.getPageCount();
        if (pageCount === 0) throw new Refusal('The PDF has no pages.');
        return { pageCount };
      },
      (e) => invalidDocument(e instanceof Refusal ? e.message : 'The file could not be read as a PDF.'),
    ),
};
