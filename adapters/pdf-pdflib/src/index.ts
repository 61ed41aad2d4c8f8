import * as TE from 'fp-ts/TaskEither';
import { EncryptedPDFError, PDFDocument } from 'pdf-lib';
import type { PdfFacts, PdfInspector } from '@esig/core';
import { invalidDocument } from '@esig/core';

const PDF_MAGIC = '%PDF-';

/** Upload inspection with pdf-lib: the header, a full parse, no encryption, at least one page. */
export const pdfLibInspector: PdfInspector = {
  inspect: (bytes) =>
    TE.tryCatch(
      async (): Promise<PdfFacts> => {
        // pdf-lib searches for the header anywhere in the first kilobyte; we insist on it at the start,
        // as every conforming writer puts it there.
        const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
        if (!head.trimStart().startsWith(PDF_MAGIC)) throw new Error('The file is not a PDF.');
        const doc = await PDFDocument.load(bytes, { updateMetadata: false, throwOnInvalidObject: true });
        const pageCount = doc.getPageCount();
        if (pageCount === 0) throw new Error('The PDF has no pages.');
        return { pageCount };
      },
      (e) =>
        invalidDocument(
          e instanceof EncryptedPDFError
            ? 'The PDF is encrypted; upload an unprotected copy.'
            : e instanceof Error && e.message.startsWith('The ')
              ? e.message
              : 'The file could not be read as a PDF.',
        ),
    ),
};
