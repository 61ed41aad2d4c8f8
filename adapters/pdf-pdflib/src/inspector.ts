import * as TE from '@esig/core/task-either';
import type { PDFObject } from 'pdf-lib';
import { PDFArray, PDFDocument, PDFName, PDFPageLeaf, PDFPageTree, PDFRef } from 'pdf-lib';
import type { InspectLimits, PdfFacts, PdfInspector } from '@esig/core';
import { invalidDocument } from '@esig/core';
import { MAX_DECODED_BYTES, decodeBudgetExceeded, withDecodeBudget } from './decode-budget.js';
import { MAX_DISTINCT_NAMES_PER_DOCUMENT, distinctNamesAndRefs } from './distinct-names.js';
import { finishLoaded } from './finished.js';
import { pageGeometry } from './page-space.js';
import { LOAD_FAST } from './save.js';
// Cross-reference entries read without interning a reference each (see xref-refs.ts).
import './xref-refs.js';

const PDF_MAGIC = '%PDF-';
/** Balanced page trees of any real size are a handful of levels deep; a deeper one is built to hurt. */
const MAX_TREE_DEPTH = 64;

const ENCRYPTED = 'The PDF is encrypted; upload an unprotected copy.';

/** A refusal whose message is meant for the client (as opposed to a parser's internal message). */
export class Refusal extends Error {}

/**
 * Walks the page tree iteratively, as pdf-lib would, but refuses what would make pdf-lib's own walk (and
 * every later copy of the pages) cost more than the pages are worth: a node listed twice (one page object
 * named 20,000 times is a 120 KB file that pdf-lib counts as 20,000 pages; a node among its own kids is a
 * cycle), more than `maxPages` leaves, or a tree deeper than MAX_TREE_DEPTH. Stops at the first of them.
 * Returns the number of pages.
 */
const countPages = (doc: PDFDocument, maxPages: number): number => {
  const ctx = doc.context;
  const seen = new Set<string>();
  const stack: { ref: PDFObject | undefined; depth: number }[] = [{ ref: doc.catalog.get(PDFName.of('Pages')), depth: 0 }];
  let pages = 0;
  while (stack.length > 0) {
    const { ref, depth } = stack.pop()!;
    if (!(ref instanceof PDFRef)) throw new Refusal('The PDF’s page tree is malformed (a page is not an indirect object).');
    if (seen.has(ref.tag)) throw new Refusal('The PDF’s page tree lists the same page more than once.');
    seen.add(ref.tag);
    const node = ctx.lookup(ref);
    if (node instanceof PDFPageLeaf) {
      if (++pages > maxPages) throw new Refusal(`The PDF has more than ${maxPages} pages, the limit per document.`);
    } else if (node instanceof PDFPageTree) {
      if (depth >= MAX_TREE_DEPTH) throw new Refusal('The PDF’s page tree is too deep.');
      const kids = ctx.lookup(node.get(PDFName.of('Kids')));
      if (!(kids instanceof PDFArray)) throw new Refusal('The PDF’s page tree is malformed (a node has no kids).');
      for (let i = kids.size() - 1; i >= 0; i--) stack.push({ ref: kids.get(i), depth: depth + 1 });
    } else if (depth === 0) throw new Refusal('The PDF has no page tree.');
    // Anything else among the kids is skipped, as pdf-lib skips it.
  }
  return pages;
};

/**
 * Inspects an upload on the calling thread (the worker pool runs this; see `createPdfWorkerPool`): the
 * header, a full parse, no encryption, a sound page tree of 1 to `maxPages` pages, each measurable. Throws
 * Refusal with a message for the client, or pdf-lib's errors on unreadable files.
 */
export const inspectPdf = (bytes: Uint8Array, limits: InspectLimits): Promise<PdfFacts> =>
  // Everything pdf-lib decodes while the file is inspected, load and trial stamp, counts against one budget. A
  // decode it stopped is what any failure was about, whatever pdf-lib made of it; pdf-lib may also go on past a
  // stream it failed to decode, as if the stream were not there, so a success is checked too.
  withDecodeBudget(MAX_DECODED_BYTES, async () => {
    const facts = await inspectWithinBudget(bytes, limits).catch((e: unknown) => {
      const limit = decodeBudgetExceeded();
      throw limit !== null ? tooExpanded(limit) : e;
    });
    const limit = decodeBudgetExceeded();
    if (limit !== null) throw tooExpanded(limit);
    return facts;
  });

/** How large an upload may grow once stamped: eight times its size and 64 MiB more (a stamp adds fonts and a little per page). */
export const maxFinishedBytes = (uploadBytes: number): number => 64 * 1024 * 1024 + 8 * uploadBytes;

const tooExpanded = (limitBytes: number) =>
  new Refusal(`The PDF cannot be read safely: its compressed objects expand to more than ${limitBytes / (1024 * 1024)} MiB.`);

const inspectWithinBudget = async (bytes: Uint8Array, { maxPages }: InspectLimits): Promise<PdfFacts> => {
  // pdf-lib accepts a header anywhere in the first kilobyte; we insist on it at the start, where
  // every conforming writer puts it.
  const head = new TextDecoder('latin1').decode(bytes.subarray(0, 1024));
  if (!head.trimStart().startsWith(PDF_MAGIC)) throw new Refusal('The file is not a PDF.');
  // Loading with ignoreEncryption and then asking is more robust than matching pdf-lib's error
  // classes, which are ES5-compiled and fail `instanceof`.
  const doc = await PDFDocument.load(bytes, { updateMetadata: false, throwOnInvalidObject: true, ignoreEncryption: true, ...LOAD_FAST }).catch(async (e: unknown) => {
    // An encrypted file's object streams are ciphertext, which the strict parse fails on before `isEncrypted`
    // could be asked (every file qpdf encrypts). Only to word the refusal, and only for a file that names an
    // /Encrypt dictionary at all (a byte search, so garbage is not parsed a second time): a lenient parse reads
    // the trailer.
    if (Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).indexOf('/Encrypt') < 0) throw e;
    const lenient = await PDFDocument.load(bytes, { updateMetadata: false, throwOnInvalidObject: false, ignoreEncryption: true }).catch(() => null);
    throw lenient?.isEncrypted === true ? new Refusal(ENCRYPTED) : e;
  });
  if (doc.isEncrypted) throw new Refusal(ENCRYPTED);
  const pageCount = countPages(doc, maxPages);
  if (pageCount === 0) throw new Refusal('The PDF has no pages.');
  // Bounded now: the tree was just proven to hold pageCount distinct pages.
  const pages = doc.getPages();
  if (pages.length !== pageCount) throw new Refusal('The PDF’s page tree is malformed.');
  const pageSizes = pages.map((page, i) => {
    const g = pageGeometry(page);
    if (g.mediaBox === 'invalid') throw new Refusal(`Page ${i + 1} of the PDF has an unusable MediaBox (not four numbers enclosing an area).`);
    return g.size;
  });
  if (distinctNamesAndRefs(doc, MAX_DISTINCT_NAMES_PER_DOCUMENT) > MAX_DISTINCT_NAMES_PER_DOCUMENT)
    throw new Refusal(
      `The PDF holds more than ${MAX_DISTINCT_NAMES_PER_DOCUMENT.toLocaleString('en-US')} distinct names and object references, more than a request of such documents could be sealed with.`,
    );
  // Whatever pdf-lib can parse, it cannot always stamp: a page whose /Resources, /Contents or /Annots is of the
  // wrong kind fails only when drawn on, and so would the request's seal once everyone had signed, with no way
  // out. So the upload is finished once now, as a test-mode seal stamps every page, and refused if that fails.
  const finished = await finishLoaded([{ id: 'upload', doc }], { fields: [], signatures: {}, testMode: true }).catch(() => {
    throw new Refusal('The PDF’s pages could not be prepared for stamping (a page object is malformed).');
  });
  // Copying pages writes out again, for each page, what the file shares among them (a direct /Resources on the page
  // tree): a 2 MB upload of 500 pages finished as 494 MB, which no store keeps and no client should fetch.
  if (finished.byteLength > maxFinishedBytes(bytes.byteLength))
    throw new Refusal(
      `The PDF would become ${Math.ceil(finished.byteLength / (1024 * 1024))} MiB once stamped, more than ${Math.floor(maxFinishedBytes(bytes.byteLength) / (1024 * 1024))} MiB allowed for a ${Math.ceil(bytes.byteLength / 1024)} KiB file: its pages share resources that each copy repeats.`,
    );
  return { pageCount, pageSizes };
};

/** Maps what inspectPdf throws to the port's refusal: a Refusal's message, or a generic one. */
export const toInvalidDocument = (e: unknown) => invalidDocument(e instanceof Refusal ? e.message : 'The file could not be read as a PDF.');

/**
 * Upload inspection with pdf-lib on the calling thread. A server runs it in the worker pool
 * (`createPdfWorkerPool().inspector`), never on its event loop.
 */
export const pdfLibInspector: PdfInspector = {
  inspect: (bytes, limits) => TE.tryCatch(() => inspectPdf(bytes, limits), toInvalidDocument),
};
