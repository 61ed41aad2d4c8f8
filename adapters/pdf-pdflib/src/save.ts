import { deflateSync } from 'node:zlib';
import type { PDFContext, PDFDocument, PDFObject } from 'pdf-lib';
import {
  PDFContentStream,
  PDFCrossRefStream,
  PDFHeader,
  PDFInvalidObject,
  PDFName,
  PDFNumber,
  PDFObjectStream,
  PDFRawStream,
  PDFRef,
  PDFStream,
  PDFTrailer,
  PDFWriter,
  ParseSpeeds,
} from 'pdf-lib';

/**
 * Loading without pauses: pdf-lib by default waits for a timer (at least a millisecond) every 100 objects
 * it parses and every 50 it writes, to keep a browser's page responsive. The renderer runs on a worker
 * thread (or is awaited by a job), where those pauses are only lost time.
 */
export const LOAD_FAST = { parseSpeed: ParseSpeeds.Fastest } as const;

/** Below this many bytes a content stream is stored as it is: compressing it would save nothing. */
const COMPRESS_FROM = 64;

/** As pdf-lib's own writer: objects per object stream. */
const OBJECTS_PER_STREAM = 50;

type Indirect = [PDFRef, PDFObject];

/** An object or cross-reference stream built unencoded, then compressed by node:zlib. */
const deflated = (stream: PDFObjectStream | PDFCrossRefStream): PDFRawStream => {
  // Sets what the dictionary derives from the contents (a cross-reference stream's W and Index).
  stream.updateDict();
  stream.dict.set(PDFName.of('Filter'), PDFName.of('FlateDecode'));
  return PDFRawStream.of(stream.dict, deflateSync(stream.getUnencodedContents()));
};

/**
 * pdf-lib's PDFStreamWriter (what `save()` uses by default), with node:zlib in place of pako for the object
 * streams and the cross-reference stream. pako is pure JavaScript and sets up fresh 64 KiB buffers for each
 * stream; with a 100-page document's two dozen object streams that was a fifth of the time spent saving,
 * and much of the garbage. Same objects in the same streams, same layout; only the compressed bytes differ.
 * No pauses (see LOAD_FAST).
 */
class ZlibStreamWriter extends PDFWriter {
  constructor(context: PDFContext) {
    super(context, Number.POSITIVE_INFINITY);
  }

  protected override async computeBufferSize(): Promise<{ size: number; header: PDFHeader; indirectObjects: Indirect[]; trailer: PDFTrailer }> {
    const ctx = this.context;
    let objectNumber = ctx.largestObjectNumber + 1;
    const header = PDFHeader.forVersion(1, 7);
    let size = header.sizeInBytes() + 2;
    const xref = PDFCrossRefStream.create(this.createTrailerDict(), false);
    const written: Indirect[] = [];
    const chunks: { ref: PDFRef; objects: Indirect[] }[] = [];

    for (const indirect of ctx.enumerateIndirectObjects()) {
      const [ref, object] = indirect;
      // What may not go into an object stream (ISO 32000-1, 7.5.7), as pdf-lib decides it.
      if (ref === ctx.trailerInfo.Encrypt || object instanceof PDFStream || object instanceof PDFInvalidObject || ref.generationNumber !== 0) {
        written.push(indirect);
        xref.addUncompressedEntry(ref, size);
        size += this.computeIndirectObjectSize(indirect);
        continue;
      }
      let chunk = chunks[chunks.length - 1];
      if (!chunk || chunk.objects.length === OBJECTS_PER_STREAM) {
        chunk = { ref: PDFRef.of(objectNumber++), objects: [] };
        chunks.push(chunk);
      }
      xref.addCompressedEntry(ref, chunk.ref, chunk.objects.length);
      chunk.objects.push(indirect);
    }

    for (const { ref, objects } of chunks) {
      const stream = deflated(PDFObjectStream.withContextAndObjects(ctx, objects, false));
      xref.addUncompressedEntry(ref, size);
      size += this.computeIndirectObjectSize([ref, stream]);
      written.push([ref, stream]);
    }

    const xrefRef = PDFRef.of(objectNumber++);
    xref.dict.set(PDFName.of('Size'), PDFNumber.of(objectNumber));
    xref.addUncompressedEntry(xrefRef, size);
    const xrefOffset = size;
    const xrefStream = deflated(xref);
    size += this.computeIndirectObjectSize([xrefRef, xrefStream]);
    written.push([xrefRef, xrefStream]);
    const trailer = PDFTrailer.forLastCrossRefSectionOffset(xrefOffset);
    size += trailer.sizeInBytes();
    return { size, header, indirectObjects: written, trailer };
  }
}

/**
 * Saves `doc` as `doc.save()` would, with three costs removed. pdf-lib compresses every content stream it
 * created (the stamps on each page, the `q`/`Q` it wraps a page's own contents in) with pako, pure
 * JavaScript, which sets up a fresh 64 KiB window per stream even for two bytes; here they are compressed by
 * node:zlib, and the tiny ones not at all. The object and cross-reference streams likewise (see
 * ZlibStreamWriter). And the writer does not pause every 50 objects (see LOAD_FAST).
 */
export const saveFast = async (doc: PDFDocument): Promise<Uint8Array> => {
  if (doc.getPageCount() === 0) doc.addPage();
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
  return new ZlibStreamWriter(ctx).serializeToBuffer();
};
