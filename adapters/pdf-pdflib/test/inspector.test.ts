import * as E from 'fp-ts/lib/Either.js';
import type { PDFPageLeaf } from 'pdf-lib';
import { PDFDocument, PDFHexString, PDFName, PDFNumber, PDFRef } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { makeCyclicPageTreePdf, makeEmptyPdf, makeEncryptedPdf, makePdf, makePdfWithPages, makeRepeatedPagePdf } from '@esig/testkit/pdf';
import { randomBytes } from 'node:crypto';
import { createDeflate, deflateSync } from 'node:zlib';
import { pdfLibInspector } from '../src/index.js';
import { MAX_DECODED_BYTES, decodeBudgetExceeded, withDecodeBudget } from '../src/decode-budget.js';
import { MAX_DISTINCT_NAMES_PER_DOCUMENT, distinctNamesAndRefs } from '../src/distinct-names.js';
import { buildFinished } from '../src/finished.js';
import { qpdfEncrypted } from './tools.js';

const inspect = async (bytes: Uint8Array, maxPages = 500) => pdfLibInspector.inspect(bytes, { maxPages })();
const refusal = (detail: string) => E.left({ _tag: 'InvalidDocument', detail });
const LETTER = { width: 612, height: 792 };

/** A page tree that is a chain: each Pages node's only kid is the next, `depth` levels down to one page. */
const makeDeepTreePdf = async (depth: number): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const page = doc.addPage([612, 792]);
  const root = doc.catalog.get(PDFName.of('Pages'))!;
  let kid = page.ref;
  for (let i = 0; i < depth; i++) kid = doc.context.register(doc.context.obj({ Type: 'Pages', Kids: [kid], Count: PDFNumber.of(1) }));
  doc.catalog.Pages().set(PDFName.of('Kids'), doc.context.obj([kid]));
  void root;
  return doc.save({ useObjectStreams: false, addDefaultPage: false });
};

describe('pdfLibInspector', () => {
  it('counts the pages of a real PDF and measures each', async () => {
    expect(await inspect(await makePdf(3))).toEqual(E.right({ pageCount: 3, pageSizes: [LETTER, LETTER, LETTER] }));
  });

  it.each([
    ['not a PDF at all', async () => new TextEncoder().encode('hello, world'), 'The file is not a PDF.'],
    ['a PDF header followed by garbage', async () => new TextEncoder().encode('%PDF-1.7\n garbage'), 'The file could not be read as a PDF.'],
    ['an encrypted PDF', makeEncryptedPdf, 'The PDF is encrypted; upload an unprotected copy.'],
    ['a PDF without pages', makeEmptyPdf, 'The PDF has no pages.'],
    ['an empty file', async () => new Uint8Array(), 'The file is not a PDF.'],
    ['a truncated PDF', async () => (await makePdf(2)).subarray(0, 200), 'The file could not be read as a PDF.'],
  ])('refuses %s', async (_name, make, detail) => {
    expect(await inspect(await make())).toEqual(refusal(detail));
  });

  it('names encryption for a PDF that qpdf encrypted (object streams its strict parse cannot read), with or without a user password', async () => {
    for (const o of [{ bits: 256 as const }, { bits: 128 as const }, { bits: 256 as const, userPassword: 'open-sesame' }])
      expect({ o, r: await inspect(await qpdfEncrypted(await makePdf(2), o)) }).toEqual({ o, r: refusal('The PDF is encrypted; upload an unprotected copy.') });
  });

  it.each([
    ['/Resources is a number', (doc: PDFDocument, page: PDFPageLeaf) => page.set(PDFName.of('Resources'), PDFNumber.of(5))],
    ['/Contents names the catalog', (doc: PDFDocument, page: PDFPageLeaf) => page.set(PDFName.of('Contents'), doc.context.getObjectRef(doc.catalog)!)],
    ['/Annots is a number', (doc: PDFDocument, page: PDFPageLeaf) => page.set(PDFName.of('Annots'), PDFNumber.of(7))],
  ])('refuses a page the seal could not stamp (%s): accepted before, the request was stuck once everyone had signed', async (_name, spoil) => {
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]);
    spoil(doc, doc.addPage([612, 792]).node);
    const bytes = await doc.save();
    // What the seal does with it (a test-mode finish stamps every page), which is what the upload must prove.
    await expect(buildFinished({ documents: [{ id: 'doc_1', bytes }], fields: [], signatures: {}, testMode: true })).rejects.toThrow();
    expect(await inspect(bytes)).toEqual(refusal('The PDF’s pages could not be prepared for stamping (a page object is malformed).'));
  });

  describe('streams pdf-lib decodes while it loads (decompression bombs)', () => {
    /** `padMiB` MiB of spaces after `prefix`, deflated a mebibyte at a time: the test never holds the expansion. */
    const deflated = async (prefix: string, padMiB: number): Promise<Buffer> => {
      const deflate = createDeflate({ level: 9 });
      const parts: Buffer[] = [];
      deflate.on('data', (c: Buffer) => parts.push(c));
      const done = new Promise((ok) => deflate.on('end', ok));
      deflate.write(Buffer.from(prefix, 'latin1'));
      const spaces = Buffer.alloc(1024 * 1024, 0x20);
      for (let i = 0; i < padMiB; i++) if (!deflate.write(spaces)) await new Promise((ok) => deflate.once('drain', ok));
      deflate.end();
      await done;
      return Buffer.concat(parts);
    };

    /**
     * A one-page PDF whose page sits in an object stream padded with `padMiB` MiB of spaces (as a fuzzer made it),
     * its dictionary spelled as `dictionary` says: any spelling pdf-lib reads as an object stream must be bounded.
     */
    const objectStreamPdf = async (padMiB: number, o: { typeName?: string; filterFirst?: boolean; twice?: boolean } = {}): Promise<Uint8Array> => {
      const head = '3 0 ';
      const once = await deflated(`${head}<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>`, padMiB);
      const data = o.twice ? deflateSync(once) : once;
      const filter = o.twice ? '/Filter [/FlateDecode /FlateDecode]' : '/Filter /FlateDecode';
      const type = `/Type /${o.typeName ?? 'ObjStm'}`;
      const dictionary = o.filterFirst ? `<< ${filter} ${type} /N 1 /First ${head.length} /Length ${data.length} >>` : `<< ${type} /N 1 /First ${head.length} ${filter} /Length ${data.length} >>`;
      let out = '%PDF-1.5\n';
      for (const [i, object] of ['<< /Type /Catalog /Pages 2 0 R >>', '<< /Type /Pages /Kids [3 0 R] /Count 1 >>'].entries()) out += `${i + 1} 0 obj\n${object}\nendobj\n`;
      return new Uint8Array(
        Buffer.concat([Buffer.from(`${out}4 0 obj\n${dictionary}\nstream\n`, 'latin1'), data, Buffer.from('\nendstream\nendobj\ntrailer\n<< /Root 1 0 R /Size 5 >>\n%%EOF\n', 'latin1')]),
      );
    };
    const TOO_FAR = refusal('The PDF cannot be read safely: its compressed objects expand to more than 256 MiB.');
    const past = MAX_DECODED_BYTES / (1024 * 1024) + 8;

    it.each([
      ['as a fuzzer wrote it', {}],
      ['with its type spelled with an escape (/Obj#53tm), which pdf-lib reads as ObjStm', { typeName: 'Obj#53tm' }],
      ['with its filter before its type', { filterFirst: true }],
      ['deflated twice, each layer small but the inner one a bomb', { twice: true }],
    ])('refuses an upload whose object stream inflates past MAX_DECODED_BYTES, %s, before it is all inflated', async (_name, o) => {
      const bomb = await objectStreamPdf(past, o);
      expect(bomb.length).toBeLessThan(1024 * 1024);
      expect(await inspect(bomb)).toEqual(TOO_FAR);
    });

    it('counts every stream decoded during one inspection against one budget, and only that inspection', async () => {
      const small = await objectStreamPdf(3);
      // pdf-lib, told not to throw on invalid objects, goes on past a stream it could not decode: the budget says so.
      const limit = 2 * 1024 * 1024;
      const hit = await withDecodeBudget(limit, async () => {
        await PDFDocument.load(small, { throwOnInvalidObject: false }).catch(() => undefined);
        return decodeBudgetExceeded();
      });
      expect(hit).toBe(limit);
      expect(decodeBudgetExceeded()).toBeNull();
      // Outside a budget (the seal's loads), only a single stream past the whole limit is refused.
      expect((await PDFDocument.load(small, { throwOnInvalidObject: false })).getPageCount()).toBe(1);
      expect(E.isRight(await inspect(small))).toBe(true);
    });

    it('accepts real files: object and cross-reference streams, as pdf-lib writes them', async () => {
      const doc = await PDFDocument.load(await makePdf(40));
      const bytes = await doc.save({ useObjectStreams: true });
      expect(new TextDecoder('latin1').decode(bytes)).toContain('/ObjStm');
      expect(E.isRight(await inspect(bytes))).toBe(true);
    });
  });

  it('refuses a file that stamping would blow up: a direct /Resources on the page tree, written again into every page copied', async () => {
    const doc = await PDFDocument.create();
    for (let i = 0; i < 400; i++) doc.addPage([612, 792]);
    // 200 KB of resources the pages inherit (random, so that no compression hides them), written once in the file
    // and once per page when the pages are copied.
    doc.catalog.Pages().set(PDFName.of('Resources'), doc.context.obj({ Pad: PDFHexString.of(randomBytes(200 * 1024).toString('hex')) }));
    for (const page of doc.getPages()) page.node.delete(PDFName.of('Resources'));
    const bytes = await doc.save();
    expect(bytes.length).toBeLessThan(1024 * 1024);
    const r = await inspect(bytes);
    expect(E.isLeft(r) && r.left.detail).toMatch(/^The PDF would become \d+ MiB once stamped, more than \d+ MiB allowed for a \d+ KiB file: its pages share resources that each copy repeats\.$/);
    // The stamped copy it must build to find out is tens of megabytes: seconds, more on a loaded machine.
  }, 120_000);

  // Found by an attacker's review: documents of 900,000 references each were accepted one by one, and failed their
  // request's seal together once everyone had signed (pdf-lib's tables of names and references are capped at 2^24).
  it('refuses a document holding more distinct names and references than a request of such documents could be sealed with', async () => {
    const filled = async (refs: number) => {
      const doc = await PDFDocument.create();
      doc.addPage([612, 792]).node.set(PDFName.of('Filler'), doc.context.obj(Array.from({ length: refs }, (_, i) => PDFRef.of(2_000_000 + i, 7))));
      return doc.save({ useObjectStreams: true });
    };
    const over = await filled(MAX_DISTINCT_NAMES_PER_DOCUMENT);
    expect(over.length).toBeLessThan(10 * 1024 * 1024);
    expect(await inspect(over)).toEqual(
      refusal('The PDF holds more than 400,000 distinct names and object references, more than a request of such documents could be sealed with.'),
    );
    // A file well under the limit, of the same make, is read.
    expect(E.isRight(await inspect(await filled(20_000)))).toBe(true);
  }, 120_000);

  it('counts each distinct name and reference once, in objects nested as deep as the file likes, and stops counting past the limit', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([612, 792]);
    // 3,000 names twice over, 1,000 references, and an array nested 100,000 deep (a recursive walk would overflow).
    const names = Array.from({ length: 3_000 }, (_, i) => PDFName.of(`Counted${i}`));
    page.node.set(PDFName.of('Names'), doc.context.obj([...names, ...names]));
    page.node.set(PDFName.of('Refs'), doc.context.obj(Array.from({ length: 1_000 }, (_, i) => PDFRef.of(5_000_000 + i))));
    let deep = doc.context.obj([PDFName.of('Deepest')]);
    for (let i = 0; i < 100_000; i++) deep = doc.context.obj([deep]);
    page.node.set(PDFName.of('Deep'), deep);
    const plain = await PDFDocument.create();
    plain.addPage([612, 792]);
    const base = distinctNamesAndRefs(plain, Infinity);
    // The added keys Names, Refs and Deep, and the name Deepest.
    expect(distinctNamesAndRefs(doc, Infinity) - base).toBe(3_000 + 1_000 + 4);
    expect(distinctNamesAndRefs(doc, 500)).toBe(501);
  });

  describe('page trees that cost more than their pages', () => {
    it('refuses a 120 KB tree that names one page 20,000 times (pdf-lib alone counts 20,000 pages)', async () => {
      const bytes = await makeRepeatedPagePdf(20_000);
      expect(bytes.length).toBeLessThan(200_000);
      expect((await PDFDocument.load(bytes)).getPageCount()).toBe(20_000);
      expect(await inspect(bytes, 1_000_000)).toEqual(refusal('The PDF’s page tree lists the same page more than once.'));
      // Twice is already once too often.
      expect(await inspect(await makeRepeatedPagePdf(2))).toEqual(refusal('The PDF’s page tree lists the same page more than once.'));
    });

    it('refuses a tree that contains itself', async () => {
      expect(await inspect(await makeCyclicPageTreePdf())).toEqual(refusal('The PDF’s page tree lists the same page more than once.'));
    });

    it('refuses more pages than the limit, and accepts exactly the limit', async () => {
      const bytes = await makePdf(6);
      expect(await inspect(bytes, 5)).toEqual(refusal('The PDF has more than 5 pages, the limit per document.'));
      expect(E.map((f: { pageCount: number }) => f.pageCount)(await inspect(bytes, 6))).toEqual(E.right(6));
    });

    it('accepts a nested tree a few levels deep, and refuses one deeper than any real document', async () => {
      expect(E.isRight(await inspect(await makeDeepTreePdf(20)))).toBe(true);
      expect(await inspect(await makeDeepTreePdf(100))).toEqual(refusal('The PDF’s page tree is too deep.'));
    });
  });

  describe('page sizes, as a viewer displays the page', () => {
    it('reports each page’s own size, turned by /Rotate and cut to its crop box', async () => {
      const bytes = await makePdfWithPages([
        { size: [612, 792] },
        { size: [595.28, 841.89] },
        { size: [612, 792], rotate: 90 },
        { size: [612, 792], rotate: -270 },
        { size: [612, 792], rotate: 180 },
        { size: [612, 792], cropBox: [36, 36, 300, 400] },
        // A crop box reaching past the media box is cut to it.
        { size: [612, 792], cropBox: [500, 700, 300, 300] },
        // Not a multiple of 90: ignored, as viewers ignore it.
        { size: [612, 792], rotate: 45 },
      ]);
      const r = await inspect(bytes);
      expect(r).toEqual(
        E.right({
          pageCount: 8,
          pageSizes: [
            LETTER,
            { width: 595.28, height: 841.89 },
            { width: 792, height: 612 },
            { width: 792, height: 612 },
            LETTER,
            { width: 300, height: 400 },
            { width: 112, height: 92 },
            LETTER,
          ],
        }),
      );
    });

    it('reads a MediaBox given by any two opposite corners, or inherited from the page tree', async () => {
      const doc = await PDFDocument.create();
      const flipped = doc.addPage();
      flipped.node.set(PDFName.of('MediaBox'), doc.context.obj([400, 500, 0, 0]));
      const inherited = doc.addPage();
      inherited.node.delete(PDFName.of('MediaBox'));
      doc.catalog.Pages().set(PDFName.of('MediaBox'), doc.context.obj([0, 0, 200, 300]));
      expect(await inspect(await doc.save())).toEqual(E.right({ pageCount: 2, pageSizes: [{ width: 400, height: 500 }, { width: 200, height: 300 }] }));
    });

    it('measures a page without a MediaBox as US Letter, as viewers show it', async () => {
      expect(await inspect(await makePdfWithPages([{ size: null }, { size: [300, 300] }]))).toEqual(
        E.right({ pageCount: 2, pageSizes: [LETTER, { width: 300, height: 300 }] }),
      );
    });

    it.each([
      ['not four numbers', (doc: PDFDocument) => doc.context.obj([0, 0, 612])],
      ['a name', (doc: PDFDocument) => doc.context.obj('Letter')],
      ['no area', (doc: PDFDocument) => doc.context.obj([0, 0, 0, 792])],
      // Each corner a finite number (309 digits), the width between them not: a 500 from the store before.
      ['corners so far apart that its size overflows', (doc: PDFDocument) => doc.context.obj([-1e308, -1e308, 1e308, 1e308])],
    ])('refuses a page whose MediaBox is %s', async (_name, box) => {
      const doc = await PDFDocument.create();
      doc.addPage();
      doc.addPage().node.set(PDFName.of('MediaBox'), box(doc));
      expect(await inspect(await doc.save())).toEqual(refusal('Page 2 of the PDF has an unusable MediaBox (not four numbers enclosing an area).'));
    });
  });
});
