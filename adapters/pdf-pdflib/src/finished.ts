import type { AdoptedSignature, Field, FinishedDocumentInput } from '@esig/core';
import type { PDFFont, PDFImage, PDFPage } from 'pdf-lib';
import { LineCapStyle, PDFArray, PDFDocument, PDFName, PDFRef, StandardFonts, rgb } from 'pdf-lib';
import type { Box } from './fonts.js';
import { drawFittedText, embedSignatureFont, encodable } from './fonts.js';
import { DEFAULT_MEDIA_BOX, drawTestBanner, inDisplaySpace, pageGeometry } from './page-space.js';
import type { Drawable } from './png.js';
import { embedPlanes, splitPng } from './png.js';
import { RenderError } from './render-failure.js';
import { LOAD_FAST, saveFast } from './save.js';
// Cross-reference entries read without interning a reference each (see xref-refs.ts).
import './xref-refs.js';

const INK = rgb(0.05, 0.1, 0.45);
const BLACK = rgb(0, 0, 0);

/** Fonts and images embedded on first use, so a document without typed signatures carries no script font. */
export class Resources {
  private signatureFont: Promise<PDFFont> | undefined;
  private helvetica: Promise<PDFFont> | undefined;
  private readonly images = new Map<string, Promise<Drawable>>();

  constructor(private readonly doc: PDFDocument) {}

  script = (): Promise<PDFFont> => (this.signatureFont ??= embedSignatureFont(this.doc));
  text = (): Promise<PDFFont> => (this.helvetica ??= this.doc.embedFont(StandardFonts.Helvetica));

  /** A drawn signature, embedded once however many fields show it. */
  image = (recipientId: string, dataUrl: string): Promise<Drawable> => {
    let image = this.images.get(recipientId);
    if (!image) {
      image = this.embedDataUrl(recipientId, dataUrl);
      this.images.set(recipientId, image);
    }
    return image;
  };

  private embedDataUrl = async (recipientId: string, dataUrl: string): Promise<Drawable> => {
    const m = /^data:image\/(png|jpeg);base64,([A-Za-z0-9+/=\s]+)$/.exec(dataUrl);
    if (!m) throw new RenderError(`The drawn signature of recipient ${recipientId} is not a PNG data URL.`);
    const bytes = Buffer.from(m[2]!, 'base64');
    // Bounded and fully checked before anything is inflated; null only for a sound PNG of another kind.
    const planes = m[1] === 'png' ? splitPng(bytes) : null;
    if (planes) return embedPlanes(this.doc, planes);
    // Any other PNG kind, and JPEG: pdf-lib's slower but general embedders.
    return fromPdfImage(m[1] === 'png' ? await this.doc.embedPng(bytes) : await this.doc.embedJpg(bytes));
  };
}

const fromPdfImage = (image: PDFImage): Drawable => ({
  width: image.width,
  height: image.height,
  draw: (page, r) => page.drawImage(image, r),
});

/** "Ada King Lovelace" → "AKL": the initials stamped for an initials field answered `true`. */
export const initialsOf = (name: string): string =>
  name
    .trim()
    .split(/\s+/u)
    .map((w) => Array.from(w)[0]?.toUpperCase() ?? '')
    .join('');

export type Stamp = (page: PDFPage, box: Box) => void;

const typedStamp = async (res: Resources, text: string): Promise<Stamp> => {
  const font = await res.script();
  const line = encodable(font, text);
  return (page, box) => drawFittedText(page, line, box, { font, color: INK, maxSize: 48, padding: 2 });
};

const imageStamp = async (res: Resources, recipientId: string, dataUrl: string): Promise<Stamp> => {
  const image = await res.image(recipientId, dataUrl);
  return (page, box) => {
    const scale = Math.min(box.width / image.width, box.height / image.height);
    const width = image.width * scale;
    const height = image.height * scale;
    image.draw(page, { x: box.x + (box.width - width) / 2, y: box.y + (box.height - height) / 2, width, height });
  };
};

export const signatureStamp = (res: Resources, recipientId: string, sig: AdoptedSignature): Promise<Stamp> =>
  sig.kind === 'typed' ? typedStamp(res, sig.value) : imageStamp(res, recipientId, sig.value);

const checkStamp: Stamp = (page, box) => {
  const side = Math.min(box.width, box.height);
  const x0 = box.x + (box.width - side) / 2;
  const y0 = box.y + (box.height - side) / 2;
  const at = (fx: number, fy: number) => ({ x: x0 + fx * side, y: y0 + fy * side });
  const style = { thickness: Math.max(side * 0.12, 0.5), color: BLACK, lineCap: LineCapStyle.Round };
  page.drawLine({ start: at(0.18, 0.52), end: at(0.4, 0.25), ...style });
  page.drawLine({ start: at(0.4, 0.25), end: at(0.84, 0.8), ...style });
};

/**
 * What a field shows, or null to leave it blank. `signature` fields take the signer's adopted signature;
 * `initials` take the value given, or (when answered `true`) the typed signature's initials or the drawn image.
 */
export const stampFor = async (res: Resources, field: Field, signatures: FinishedDocumentInput['signatures']): Promise<Stamp | null> => {
  const sig = signatures[field.recipientId];
  const v = field.value;
  switch (field.type) {
    case 'signature':
      return sig ? signatureStamp(res, field.recipientId, sig) : null;
    case 'initials':
      if (typeof v === 'string' && v.trim().length > 0) return typedStamp(res, v.trim());
      if (v !== true || !sig) return null;
      return sig.kind === 'typed' ? typedStamp(res, initialsOf(sig.value)) : imageStamp(res, field.recipientId, sig.value);
    case 'text':
    case 'name':
    case 'email':
    case 'date_signed': {
      if (typeof v !== 'string' || v.length === 0) return null;
      const font = await res.text();
      const line = encodable(font, v);
      return (page, box) => drawFittedText(page, line, box, { font, color: BLACK, maxSize: 12, padding: 2 });
    }
    case 'checkbox':
      return v === true ? checkStamp : null;
    default: {
      const unknown: never = field.type;
      throw new RenderError(`Unknown field type ${String(unknown)}.`);
    }
  }
};

/**
 * Gives a page an array of content streams of its own when it names one by reference: several pages may name the
 * same array, and stamping a page appends its stream to the array, so a stamp (a signature, a value, the test
 * banner) would show on every page that shares it. The streams themselves stay shared; only the list is copied.
 */
const ownContents = (page: PDFPage): void => {
  const contents = page.node.get(PDFName.of('Contents'));
  if (!(contents instanceof PDFRef)) return;
  const target = page.node.context.lookup(contents);
  if (target instanceof PDFArray) page.node.set(PDFName.of('Contents'), page.node.context.obj(target.asArray()));
};

/** Builds the finished PDF; throws RenderError (or pdf-lib's errors) on failure. */
export const buildFinished = async (input: FinishedDocumentInput): Promise<Uint8Array> => {
  if (input.documents.length === 0) throw new RenderError('The request has no documents to finish.');
  const loaded: LoadedDocument[] = [];
  for (const d of input.documents) loaded.push({ id: d.id, doc: await PDFDocument.load(d.bytes, { updateMetadata: false, ...LOAD_FAST }) });
  return finishLoaded(loaded, input);
};

/** A request's document, parsed. */
export interface LoadedDocument {
  readonly id: string;
  readonly doc: PDFDocument;
}

/**
 * `buildFinished` over documents already parsed (an upload's inspection finishes the document it has just read,
 * rather than parse it a second time). Reads the documents and leaves them as they were.
 */
export const finishLoaded = async (documents: readonly LoadedDocument[], input: Omit<FinishedDocumentInput, 'documents'>): Promise<Uint8Array> => {
  // No clock here: leaving the dates unset keeps the output identical for identical input.
  const out = await PDFDocument.create({ updateMetadata: false });
  out.setProducer('esig');
  out.setCreator('esig');

  const pagesOf = new Map<string, PDFPage[]>();
  for (const { id, doc: src } of documents) {
    // One copyPages call per document, so pages share the resources (fonts, images) they shared before.
    const pages = await out.copyPages(src, src.getPageIndices());
    for (const p of pages) {
      out.addPage(p);
      ownContents(p);
      // A page without a usable MediaBox is shown as US Letter (and was measured so at upload): say so
      // explicitly, so that viewers, the stamps and the upload's page size all agree.
      if (pageGeometry(p).mediaBox !== 'given') p.setMediaBox(DEFAULT_MEDIA_BOX.x, DEFAULT_MEDIA_BOX.y, DEFAULT_MEDIA_BOX.width, DEFAULT_MEDIA_BOX.height);
    }
    pagesOf.set(id, pages);
  }

  const res = new Resources(out);
  for (const field of input.fields) {
    const pages = pagesOf.get(field.documentId);
    if (!pages) throw new RenderError(`Field ${field.id} is on document ${field.documentId}, which is not among the documents.`);
    const page = pages[field.page - 1];
    if (!page) throw new RenderError(`Field ${field.id} is on page ${field.page}, but document ${field.documentId} has ${pages.length}.`);
    const stamp = await stampFor(res, field, input.signatures);
    if (!stamp) continue;
    inDisplaySpace(page, ({ height }) =>
      // Fields are placed from the top-left; pdf-lib draws from the bottom-left.
      stamp(page, { x: field.x, y: height - field.y - field.height, width: field.width, height: field.height }),
    );
  }

  if (input.testMode) {
    const bold = await out.embedFont(StandardFonts.HelveticaBold);
    for (const page of out.getPages()) drawTestBanner(page, bold);
  }
  return saveFast(out);
};
