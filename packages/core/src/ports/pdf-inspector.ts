import type { TaskEither } from 'fp-ts/TaskEither';
import type { InvalidDocument } from '../errors';

export interface PdfFacts {
  readonly pageCount: number;
}

/** Reads an upload: refuses anything that is not a readable, unencrypted PDF with at least one page. */
export interface PdfInspector {
  inspect(bytes: Uint8Array): TaskEither<InvalidDocument, PdfFacts>;
}
