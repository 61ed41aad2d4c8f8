import { PDFDocument, PDFName, PDFNumber, StandardFonts } from 'pdf-lib';

/** A real PDF of `pages` Letter pages, each saying its number, for upload tests. */
export const makePdf = async (pages = 1, label = 'esig test document'): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= pages; i++) {
    const page = doc.addPage([612, 792]);
    page.drawText(`${label} — page ${i} of ${pages}`, { x: 72, y: 720, size: 14, font });
  }
  return doc.save();
};

/** A syntactically valid PDF with no pages (must be refused as invalid_document). */
export const makeEmptyPdf = async (): Promise<Uint8Array> => (await PDFDocument.create()).save({ addDefaultPage: false });

/** A PDF whose trailer declares encryption (must be refused as invalid_document). */
export const makeEncryptedPdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  doc.addPage();
  const enc = doc.context.obj({ Filter: 'Standard', V: 2, R: 3, Length: 128, P: -3904 });
  doc.context.trailerInfo.Encrypt = doc.context.register(enc);
  void PDFName;
  return doc.save();
};

/**
 * A PDF whose page tree lists its one page object `times` times (the 20,000-fold tree of a security review):
 * a reader that follows the tree counts `times` pages, each one the same object.
 */
export const makeRepeatedPagePdf = async (times: number): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  const tree = doc.catalog.Pages();
  tree.set(PDFName.of('Kids'), doc.context.obj(Array.from({ length: times }, () => page.ref)));
  tree.set(PDFName.of('Count'), PDFNumber.of(times));
  return doc.save({ useObjectStreams: false, addDefaultPage: false });
};

/** A PDF whose page tree contains itself among its kids, beside one real page. */
export const makeCyclicPageTreePdf = async (): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  const tree = doc.catalog.Pages();
  tree.set(PDFName.of('Kids'), doc.context.obj([page.ref, doc.catalog.get(PDFName.of('Pages'))!]));
  tree.set(PDFName.of('Count'), PDFNumber.of(2));
  return doc.save({ useObjectStreams: false, addDefaultPage: false });
};

export interface PageSpec {
  /** MediaBox width and height in points, lower-left at the origin; null leaves the page without a MediaBox. */
  readonly size: readonly [number, number] | null;
  /** /Rotate, in degrees. */
  readonly rotate?: number;
  /** /CropBox as [x, y, width, height]. */
  readonly cropBox?: readonly [number, number, number, number];
}

/** A PDF with one page per spec, each saying its number: page geometry for measuring and stamping tests. */
export const makePdfWithPages = async (specs: readonly PageSpec[]): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  specs.forEach((s, i) => {
    const page = doc.addPage(s.size === null ? [612, 792] : [s.size[0], s.size[1]]);
    page.drawText(`page ${i + 1}`, { x: 20, y: 20, size: 12, font });
    if (s.rotate !== undefined) page.node.set(PDFName.of('Rotate'), PDFNumber.of(s.rotate));
    if (s.cropBox) page.setCropBox(...(s.cropBox as [number, number, number, number]));
    if (s.size === null) page.node.delete(PDFName.of('MediaBox'));
  });
  return doc.save({ useObjectStreams: false });
};
