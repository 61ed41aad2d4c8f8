import { deflateSync } from 'node:zlib';
import type { PDFDocument } from 'pdf-lib';
import { PDFContentStream, PDFName, PDFRawStream, ParseSpeeds } from 'pdf-lib';

/**
 * Loading without pauses: pdf-lib by default waits for a timer (at least a millisecond) every 100 objects
 * it parses and every 50 it writes, to keep a browser's page responsive. The renderer runs on a worker
 * thread (or is awaited by a job), where those pauses are only lost time.
 */
export const LOAD_FAST = { parseSpeed: ParseSpeeds.Fastest } as const;

/** Below this many bytes a content stream is stored as it is: compressing it would save nothing. */
const COMPRESS_FROM = 64;

/**
 * Saves `doc` as `doc.save()` would, with two costs removed. pdf-lib compresses every content stream it
 * created (the stamps on each page, the `q`/`Q` it wraps a page's own contents in, the certificate's
 * text) with pako, pure JavaScript, which sets up a fresh 64 KiB window per stream even for two bytes;
 * here they are compressed by node:zlib (native), and the tiny ones not at all. And the writer does not
 * pause every 50 objects (see LOAD_FAST).
 */
export const saveFast = async (doc: PDFDocument): Promise<Uint8Array> => {
  // Fonts and images are written into the document on flush: after it, every content stream is final.
  await doc.flush();
  const ctx = doc.context;
  for (const [ref, object] of ctx.enumerateIndirectObjects()) {
    if (!(object instanceof PDFContentStream)) continue;
    const contents = object.getUnencodedContents();
    const dict = object.dict.clone(ctx);
    if (contents.length < COMPRESS_FROM) dict.delete(PDFName.of('Filter'));
    else dict.set(PDFName.of('Filter'), PDFName.of('FlateDecode'));
    ctx.assign(ref, PDFRawStream.of(dict, contents.length < COMPRESS_FROM ? contents : deflateSync(contents)));
  }
  return doc.save({ objectsPerTick: Number.POSITIVE_INFINITY });
};
