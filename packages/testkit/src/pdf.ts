import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';

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
