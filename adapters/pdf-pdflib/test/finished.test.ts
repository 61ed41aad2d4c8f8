import type { AdoptedSignature, Field, FinishedDocumentInput } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { PDFDocument, PDFName, StandardFonts, degrees } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { makePdf, makePdfWithPages } from '@esig/testkit/pdf';
import { TEST_MARK, pdfLibRenderer } from '../src/index.js';
import { field } from './fixtures.js';
import { drawnSignatureDataUrl } from '@esig/testkit/png';
import { darkPixels, pdfFonts, pdfImages, pdfText, pdfWords, qpdfCheck } from './tools.js';

const ADA: AdoptedSignature = { kind: 'typed', value: 'Ada Lovelace' };
const BOB: AdoptedSignature = { kind: 'drawn', value: drawnSignatureDataUrl(300, 100) };

const A = 'doc_A';
const B = 'doc_B';
const fields: Field[] = [
  field({ documentId: A, recipientId: 'ada', type: 'signature', page: 1, x: 72, y: 100, width: 200, height: 50 }),
  field({ documentId: A, recipientId: 'ada', type: 'text', page: 2, x: 72, y: 200, width: 240, height: 20, value: 'Purchase order 4711' }),
  field({ documentId: A, recipientId: 'ada', type: 'email', page: 2, x: 72, y: 240, width: 240, height: 20, value: 'ada@example.com' }),
  field({ documentId: A, recipientId: 'ada', type: 'date_signed', page: 2, x: 72, y: 280, width: 120, height: 20, value: '2026-11-23' }),
  field({ documentId: A, recipientId: 'ada', type: 'name', page: 2, x: 72, y: 320, width: 240, height: 20, value: 'Café ☕ 東京 Ltd' }),
  field({ documentId: B, recipientId: 'ada', type: 'initials', page: 1, x: 400, y: 700, width: 60, height: 30, value: true }),
  field({ documentId: B, recipientId: 'ada', type: 'checkbox', page: 1, x: 72, y: 300, width: 16, height: 16, value: true }),
  field({ documentId: B, recipientId: 'ada', type: 'checkbox', page: 1, x: 72, y: 340, width: 16, height: 16, value: false }),
  field({ documentId: B, recipientId: 'bob', type: 'signature', page: 2, x: 300, y: 600, width: 200, height: 60 }),
  field({ documentId: B, recipientId: 'bob', type: 'text', page: 3, x: 72, y: 400, width: 200, height: 20, required: false, value: null }),
  field({ documentId: B, recipientId: 'bob', type: 'initials', page: 3, x: 72, y: 450, width: 60, height: 30, required: false, value: null }),
];

let documents: FinishedDocumentInput['documents'];
const input = (over: Partial<FinishedDocumentInput> = {}): FinishedDocumentInput => ({
  documents,
  fields,
  signatures: { ada: ADA, bob: BOB },
  testMode: false,
  ...over,
});

const render = async (i: FinishedDocumentInput): Promise<Uint8Array> => {
  const r = await pdfLibRenderer.renderFinished(i)();
  if (E.isLeft(r)) throw new Error(`render failed: ${r.left.detail}`);
  return r.right;
};

let live: Uint8Array;
let test: Uint8Array;

beforeAll(async () => {
  documents = [
    { id: A, bytes: await makePdf(2, 'Alpha') },
    { id: B, bytes: await makePdf(3, 'Beta') },
  ];
  live = await render(input());
  test = await render(input({ testMode: true }));
});

describe('pdfLibRenderer.renderFinished', () => {
  it('stamps a page alone when its /Contents is an array another page shares: a stamp never shows on a page it was not put on', async () => {
    const drawn = await PDFDocument.create();
    const font = await drawn.embedFont(StandardFonts.Helvetica);
    for (const text of ['first', 'second']) drawn.addPage([612, 792]).drawText(`page ${text}`, { x: 72, y: 700, font, size: 12 });
    // Saved and loaded again, so that each page's drawing is a content stream it names.
    const doc = await PDFDocument.load(await drawn.save());
    const [one, two] = doc.getPages();
    // Both pages name one array of content streams, as a sender's file may (an attacker's review).
    // (pdf-lib writes a page's drawing as a direct array naming its stream: that array becomes one object.)
    const shared = doc.context.register(one!.node.get(PDFName.of('Contents'))!);
    one!.node.set(PDFName.of('Contents'), shared);
    two!.node.set(PDFName.of('Contents'), shared);
    const bytes = await doc.save();
    const out = await render({
      documents: [{ id: A, bytes }],
      fields: [field({ documentId: A, recipientId: 'ada', type: 'text', page: 1, x: 72, y: 300, width: 300, height: 30, value: 'ONLY-ON-PAGE-ONE' })],
      signatures: {},
      testMode: true,
    });
    expect(await pdfText(out, 1)).toContain('ONLY-ON-PAGE-ONE');
    expect(await pdfText(out, 2)).not.toContain('ONLY-ON-PAGE-ONE');
    // One test banner per page, not one per page that shares the array.
    for (const page of [1, 2]) expect((await pdfText(out, page)).split('TEST').length - 1, `page ${page}`).toBe(1);
  });

  it('has every page of every document, in order', async () => {
    expect((await PDFDocument.load(live)).getPageCount()).toBe(5);
    const labels = ['Alpha — page 1 of 2', 'Alpha — page 2 of 2', 'Beta — page 1 of 3', 'Beta — page 2 of 3', 'Beta — page 3 of 3'];
    for (const [i, label] of labels.entries()) expect(await pdfText(live, i + 1)).toContain(label);
  });

  it('passes qpdf --check in live and test mode', async () => {
    for (const pdf of [live, test]) {
      const { code, output } = await qpdfCheck(pdf);
      expect(output).toContain('No syntax or stream encoding errors found');
      expect(code).toBe(0);
    }
  });

  it('stamps the typed signature in the embedded, subset handwriting font, and the text values in Helvetica', async () => {
    expect(await pdfText(live, 1)).toContain('Ada Lovelace');
    const page2 = await pdfText(live, 2);
    for (const v of ['Purchase order 4711', 'ada@example.com', '2026-11-23']) expect(page2).toContain(v);
    expect((await pdfFonts(live)).find((f) => f.name.endsWith('+DancingScript-Regular'))).toEqual(expect.objectContaining({ embedded: true, subset: true }));
  });

  it('shares one parse of the handwriting font between documents without carrying glyphs from one to the next', async () => {
    const typed = (value: string) =>
      input({ fields: [fields[0]!], signatures: { ada: { kind: 'typed', value } } });
    const zed = await render(typed('Zed Quux'));
    const grace = await render(typed('Grace Hopper & Wolfgang Ångström'));
    // Rendering another document in between, with other glyphs, changes nothing in this one's subset.
    expect(Buffer.from(await render(typed('Zed Quux'))).equals(Buffer.from(zed))).toBe(true);
    expect(await pdfText(zed, 1)).toContain('Zed Quux');
    expect(await pdfText(grace, 1)).toContain('Grace Hopper & Wolfgang Ångström');
    for (const pdf of [zed, grace]) expect((await qpdfCheck(pdf)).code).toBe(0);
  });

  it('replaces characters the standard fonts cannot encode with "?" instead of failing', async () => {
    expect(await pdfText(live, 2)).toContain('Café ? ?? Ltd');
  });

  it('stamps initials answered true as the typed signature’s initials', async () => {
    expect((await pdfText(live, 3)).split(/\s+/)).toContain('AL');
  });

  it('stamps initials given as text as that text', async () => {
    const initials = field({ documentId: A, recipientId: 'ada', type: 'initials', page: 1, x: 400, y: 100, width: 60, height: 30, value: 'A.L.' });
    expect(await pdfText(await render(input({ fields: [initials] })), 1)).toContain('A.L.');
  });

  it('places a field given from the top-left at that spot on the page', async () => {
    const words = (await pdfWords(live, 1)).filter((w) => w.text === 'Ada' || w.text === 'Lovelace');
    expect(words).toHaveLength(2);
    for (const w of words) {
      expect(w.xMin).toBeGreaterThanOrEqual(72);
      expect(w.xMax).toBeLessThanOrEqual(272);
      expect(w.yMin).toBeGreaterThanOrEqual(100);
      expect(w.yMax).toBeLessThanOrEqual(150);
    }
  });

  it('places fields on a rotated page where the viewer shows its top-left', async () => {
    const src = await PDFDocument.load(await makePdf(1, 'Landscape'));
    src.getPage(0).setRotation(degrees(90));
    const rotated = await render({
      documents: [{ id: 'rot', bytes: await src.save() }],
      fields: [field({ documentId: 'rot', recipientId: 'ada', type: 'text', page: 1, x: 72, y: 100, width: 200, height: 30, value: 'Rotated' })],
      signatures: {},
      testMode: true,
    });
    const words = await pdfWords(rotated, 1);
    const w = words.find((x) => x.text === 'Rotated');
    expect(w).toBeDefined();
    expect(w!.xMin).toBeGreaterThanOrEqual(72);
    expect(w!.xMax).toBeLessThanOrEqual(272);
    expect(w!.yMin).toBeGreaterThanOrEqual(100);
    expect(w!.yMax).toBeLessThanOrEqual(130);
    // The banner runs across the top of the page as displayed (792 points wide once turned).
    const mark = words.find((x) => x.text === 'TEST');
    expect(mark!.yMax).toBeLessThan(18);
    expect(mark!.xMin).toBeGreaterThan(300);
  });

  it('embeds a drawn signature as an image on its field’s page, and no image for typed ones', async () => {
    const images = (await pdfImages(live)).filter((i) => i.type === 'image');
    expect(images).toEqual([expect.objectContaining({ page: 4, width: 300, height: 100 })]);
    const typedOnly = await render(input({ fields: fields.filter((f) => f.recipientId === 'ada') }));
    expect(await pdfImages(typedOnly)).toEqual([]);
  });

  it('scales a drawn signature into its box, keeping its aspect', async () => {
    // 300×100 into 200×60: 180×60, centred horizontally: x 310–490, y 600–660 from the top.
    expect(await darkPixels(live, 4, { x: 312, y: 600, width: 176, height: 60 })).toBeGreaterThan(100);
    expect(await darkPixels(live, 4, { x: 300, y: 590, width: 8, height: 80 })).toBe(0);
    expect(await darkPixels(live, 4, { x: 492, y: 590, width: 8, height: 80 })).toBe(0);
    expect(await darkPixels(live, 4, { x: 300, y: 520, width: 200, height: 75 })).toBe(0);
    expect(await darkPixels(live, 4, { x: 300, y: 665, width: 200, height: 75 })).toBe(0);
  });

  it('draws a check mark in a checked box and nothing in an unchecked one', async () => {
    expect(await darkPixels(live, 3, { x: 72, y: 300, width: 16, height: 16 })).toBeGreaterThan(10);
    expect(await darkPixels(live, 3, { x: 72, y: 340, width: 16, height: 16 })).toBe(0);
  });

  it('leaves fields with null values blank', async () => {
    expect((await pdfText(live, 5)).trim()).toBe('Beta — page 3 of 3');
    expect(await darkPixels(live, 5, { x: 72, y: 400, width: 200, height: 80 })).toBe(0);
  });

  it('marks every page in test mode, and none in live mode', async () => {
    for (let p = 1; p <= 5; p++) {
      expect(await pdfText(test, p)).toContain(TEST_MARK);
      expect(await pdfText(live, p)).not.toContain('TEST');
    }
  });

  it('produces identical bytes for identical input', async () => {
    expect(Buffer.from(await render(input({ testMode: true }))).equals(Buffer.from(test))).toBe(true);
  });

  it('sets the producer and no clock-dependent dates', async () => {
    const doc = await PDFDocument.load(live, { updateMetadata: false });
    expect(doc.getProducer()).toBe('esig');
    expect(doc.getCreationDate()).toBeUndefined();
  });

  it('stamps a page without a MediaBox as the US Letter page viewers show, and says so in the output', async () => {
    const bytes = await makePdfWithPages([{ size: null }]);
    // Before the fix, pdf-lib's MediaBox lookup threw here: the request could never be sealed.
    const out = await render({
      documents: [{ id: A, bytes }],
      fields: [field({ documentId: A, recipientId: 'ada', type: 'text', x: 400, y: 700, width: 200, height: 30, value: 'BOTTOM-RIGHT' })],
      signatures: {},
      testMode: true,
    });
    const page = (await PDFDocument.load(out)).getPage(0);
    expect(page.getMediaBox()).toEqual({ x: 0, y: 0, width: 612, height: 792 });
    const word = (await pdfWords(out, 1)).find((w) => w.text === 'BOTTOM-RIGHT')!;
    expect(word.xMin).toBeGreaterThanOrEqual(400);
    expect(word.yMin).toBeGreaterThanOrEqual(700);
    expect(word.yMax).toBeLessThanOrEqual(730);
    expect(await pdfText(out, 1)).toContain(TEST_MARK);
    expect((await qpdfCheck(out)).code).toBe(0);
  });

  it('stamps inside the crop box of a cropped page, measured from its top-left', async () => {
    const bytes = await makePdfWithPages([{ size: [612, 792], cropBox: [100, 100, 300, 400] }]);
    const out = await render({
      documents: [{ id: A, bytes }],
      fields: [field({ documentId: A, recipientId: 'ada', type: 'text', x: 10, y: 10, width: 150, height: 20, value: 'CORNER' })],
      signatures: {},
      testMode: false,
    });
    // pdftoppm renders the whole media box: the crop box's top-left is at (100, 792 - 500) there, and the
    // stamp 10 points right of and below it, not at (10, 10) of the media box.
    expect(await darkPixels(out, 1, { x: 110, y: 302, width: 150, height: 20 })).toBeGreaterThan(20);
    expect(await darkPixels(out, 1, { x: 0, y: 0, width: 612, height: 290 })).toBe(0);
    expect((await PDFDocument.load(out)).getPage(0).getCropBox()).toEqual({ x: 100, y: 100, width: 300, height: 400 });
  });

  describe('refuses with a RenderFailure, never a throw', () => {
    const detailOf = async (i: FinishedDocumentInput) => {
      const r = await pdfLibRenderer.renderFinished(i)();
      expect(E.isLeft(r)).toBe(true);
      return E.isLeft(r) ? r.left : undefined;
    };

    it('a field on a document that is not among the documents', async () => {
      const f = field({ documentId: 'doc_X', recipientId: 'ada', type: 'text', value: 'x' });
      expect(await detailOf(input({ fields: [f] }))).toEqual({ _tag: 'RenderFailure', detail: expect.stringContaining('doc_X') });
    });

    it('a field on a page the document does not have', async () => {
      const f = field({ documentId: A, recipientId: 'ada', type: 'text', page: 3, value: 'x' });
      expect(await detailOf(input({ fields: [f] }))).toEqual({ _tag: 'RenderFailure', detail: expect.stringContaining('page 3') });
    });

    it('a document that is not a PDF', async () => {
      const r = await detailOf(input({ documents: [{ id: A, bytes: new TextEncoder().encode('%PDF-1.7\n garbage') }], fields: [] }));
      expect(r?._tag).toBe('RenderFailure');
    });

    it('a drawn signature that is not a PNG data URL', async () => {
      const r = await detailOf(input({ signatures: { ada: ADA, bob: { kind: 'drawn', value: 'https://example.com/sig.png' } } }));
      expect(r).toEqual({ _tag: 'RenderFailure', detail: 'The drawn signature of recipient bob is not a PNG data URL.' });
    });

    it('a PNG data URL whose bytes are not a PNG', async () => {
      const r = await detailOf(input({ signatures: { ada: ADA, bob: { kind: 'drawn', value: 'data:image/png;base64,aGVsbG8=' } } }));
      expect(r?._tag).toBe('RenderFailure');
    });

    it('no documents at all', async () => {
      expect(await detailOf(input({ documents: [], fields: [] }))).toEqual({ _tag: 'RenderFailure', detail: 'The request has no documents to finish.' });
    });
  });
});
