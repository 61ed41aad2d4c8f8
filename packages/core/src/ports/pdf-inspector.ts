import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import type { InvalidDocument, ServerBusy } from '../errors.js';
import type { PageSize } from '../model/document.js';

export interface PdfFacts {
  readonly pageCount: number;
  /** One size per page, in order (`pageSizes.length === pageCount`). */
  readonly pageSizes: readonly PageSize[];
  /**
   * The SHA-256 of exactly the bytes inspected, as 64 lower-case hex digits, when the inspector computed it where it
   * read them (a worker thread): it grows with the file, and the caller then need not compute it on its own thread
   * (11 ms for 15 MB). Without it, or in another shape, the core computes it.
   */
  readonly sha256?: string;
}

export interface InspectLimits {
  /** More pages than this is a refusal, found without reading the pages beyond the limit. */
  readonly maxPages: number;
}

/**
 * Reads an upload: refuses anything that is not a readable, unencrypted PDF with 1 to `maxPages` pages,
 * each page listed once in its page tree (a tree that names one page many times, or itself, would make
 * every later pass over the document as slow as the repetition is long), each with a measurable page box.
 * A page without a MediaBox is measured as US Letter (612 × 792 points), as viewers show it and as the
 * renderer stamps it. The detail of a refusal is meant for the client.
 *
 * `ServerBusy` when it cannot read the file soon (its queue of files to read is too long): the file was not read
 * and says nothing about it, and the client may send it again later.
 */
export interface PdfInspector {
  inspect(bytes: Uint8Array, limits: InspectLimits): TaskEither<InvalidDocument | ServerBusy, PdfFacts>;
}
