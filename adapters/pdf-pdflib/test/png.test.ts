import { deflateSync } from 'node:zlib';
import * as E from 'fp-ts/lib/Either.js';
import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import { pdfLibRenderer } from '../src/index.js';
import type { FilteredPlanes } from '../src/png.js';
import { embedPlanes, splitPng } from '../src/png.js';
import { RenderError } from '../src/render-failure.js';
import { field } from './fixtures.js';
import type { PngOptions } from '@esig/testkit/png';
import { drawnSignatureDataUrl, encodePng, hostileDrawnSignatures, pngFromRaw } from '@esig/testkit/png';
import type { ImageSamples } from './tools.js';
import { darkPixels, pdfImageSamples, pdfImages, qpdfCheck } from './tools.js';

/** Random bytes: each filter's predictor matters, and Paeth meets its ties (where its comparisons' order decides). */
const noise = (x: number, y: number): number => {
  let h = Math.imul(x + 1, 0x9e3779b1) ^ Math.imul(y + 7, 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 15), 0xc2b2ae35);
  return (h ^ (h >>> 13)) >>> 0;
};
/** Flat runs and gentle gradients, as in real drawings. */
const smooth = (x: number, y: number): number => {
  const g = (x * 3 + y * 5) & 0xff;
  return y % 2 === 0 ? ((g << 24) | ((255 - g) << 16) | ((x >> 2) << 8) | 0x80) >>> 0 : x & 4 ? 0xffffffff : 0x10203040;
};
const noisy = (x: number, y: number): number => (y % 4 === 3 ? smooth(x, y) : noise(x, y));

const expectedPlanes = (width: number, height: number, pixel: (x: number, y: number) => number) => {
  const rgb = new Uint8Array(width * height * 3);
  const alpha = new Uint8Array(width * height);
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      const v = pixel(x, y) >>> 0;
      const p = y * width + x;
      rgb.set([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff], p * 3);
      alpha[p] = v & 0xff;
    }
  return { rgb, alpha };
};

/** One page showing the planes' image: what a PDF reader is given. */
const embedded = async (planes: FilteredPlanes): Promise<Uint8Array> => {
  const doc = await PDFDocument.create();
  const page = doc.addPage([200, 200]);
  embedPlanes(doc, planes).draw(page, { x: 10, y: 10, width: 100, height: 100 });
  return doc.save();
};

/** The image's colour and alpha samples as poppler decodes them from the PDF (alpha null when there is no soft mask). */
const decodedByReader = async (planes: FilteredPlanes) => {
  const pdf = await embedded(planes);
  expect((await qpdfCheck(pdf)).code).toBe(0);
  // The image, then its soft mask (which pdfimages may write as grey PPM: three equal bytes a pixel).
  const images = await pdfImageSamples(pdf);
  expect(images).toHaveLength(planes.alpha ? 2 : 1);
  for (const i of images) expect([i.width, i.height]).toEqual([planes.width, planes.height]);
  const [rgb, mask] = images as [ImageSamples, ImageSamples | undefined];
  expect(rgb.kind).toBe('rgb');
  let alpha: Buffer | null = mask?.samples ?? null;
  if (mask?.kind === 'rgb') {
    alpha = Buffer.alloc(mask.width * mask.height);
    for (let p = 0; p < alpha.length; p++) {
      const [r, g, b] = mask.samples.subarray(3 * p, 3 * p + 3);
      expect(r === g && g === b, `mask pixel ${p}`).toBe(true);
      alpha[p] = r!;
    }
  }
  return { rgb: rgb.samples, alpha };
};

describe('splitPng', () => {
  it.each([0, 1, 2, 3, 4, 'mixed'] as const)('gives 8-bit RGBA rows with filter %s planes a PDF reader decodes to the exact pixels', async (filter) => {
    const planes = splitPng(encodePng(64, 48, noisy, { filter }))!;
    const want = expectedPlanes(64, 48, noisy);
    expect(planes.width).toBe(64);
    expect(planes.height).toBe(48);
    const got = await decodedByReader(planes);
    expect(got.rgb.equals(Buffer.from(want.rgb))).toBe(true);
    expect(got.alpha?.equals(Buffer.from(want.alpha))).toBe(true);
  });

  it('passes 8-bit RGB through as the PNG compressed it, with no alpha plane, decoded exactly', async () => {
    const png = encodePng(19, 11, noisy, { colour: 'rgb', filter: 'mixed' });
    const planes = splitPng(png)!;
    expect(planes.alpha).toBeNull();
    expect(planes.rgbDeflated).not.toBeNull();
    expect(Buffer.from(png).includes(Buffer.from(planes.rgbDeflated!))).toBe(true);
    const got = await decodedByReader(planes);
    expect(got.alpha).toBeNull();
    expect(got.rgb.equals(Buffer.from(expectedPlanes(19, 11, noisy).rgb))).toBe(true);
  });

  const opaquePixel = (x: number, y: number) => ((noisy(x, y) & ~0xff) | 0xff) >>> 0;

  it.each([0, 1, 2, 3, 4, 'mixed'] as const)('drops the alpha plane of a fully opaque RGBA image (filter %s), and the pixels stay exact', async (filter) => {
    const planes = splitPng(encodePng(9, 7, opaquePixel, { filter }))!;
    expect(planes.alpha).toBeNull();
    expect((await decodedByReader(planes)).rgb.equals(Buffer.from(expectedPlanes(9, 7, opaquePixel).rgb))).toBe(true);
  });

  it.each([0, 1, 2, 3, 4, 'mixed'] as const)('keeps the alpha plane when a single pixel is not opaque (filter %s)', (filter) => {
    for (const [px, py] of [[0, 0], [8, 0], [0, 6], [4, 3], [8, 6]] as const) {
      const pixel = (x: number, y: number) => (x === px && y === py ? (opaquePixel(x, y) & ~0xff) | 0xfe : opaquePixel(x, y)) >>> 0;
      expect(splitPng(encodePng(9, 7, pixel, { filter }))!.alpha, `${px},${py}`).not.toBeNull();
    }
  });

  it.each<[string, Uint8Array]>([
    ['a palette PNG', encodePng(8, 8, noisy, { colour: 'palette' })],
    ['an interlaced PNG', encodePng(13, 9, noisy, { interlace: true, filter: 'mixed' })],
  ])('leaves %s, once its image data is proven sound, to pdf-lib (null)', (_name, bytes) => {
    expect(splitPng(bytes)).toBeNull();
  });

  it('throws on a PNG whose image data is cut short', () => {
    const png = encodePng(8, 8, noisy);
    const short = deflateSync(Buffer.alloc(10));
    const at = png.indexOf('IDAT') - 4;
    const idat = Buffer.alloc(12 + short.length);
    idat.writeUInt32BE(short.length);
    idat.write('IDAT', 4, 'latin1');
    short.copy(idat, 8);
    expect(() => splitPng(Buffer.concat([png.subarray(0, at), idat, png.subarray(png.length - 12)]))).toThrow(/truncated/);
  });

  const fromDataUrl = (u: string) => Buffer.from(u.slice(u.indexOf(',') + 1), 'base64');
  const hostile = hostileDrawnSignatures();

  it.each<[string, RegExp]>([
    ['is only the PNG signature', /no header/],
    ['stops after its header', /no image data/],
    ['is truncated inside its image data', /truncated/],
    ['has corrupt image data', /corrupt/],
    ['uses an unknown row filter', /unknown filter type 7/],
    ['declares 12,000 × 12,000 pixels', /12000×12000 pixels; at most 4096 on a side/],
    ['holds far more image data than its header says', /larger than its header says/],
  ])('refuses a PNG that %s, with a reason (RenderError)', (name, reason) => {
    const bytes = fromDataUrl(hostile[name]!);
    expect(() => splitPng(bytes)).toThrow(RenderError);
    expect(() => splitPng(bytes)).toThrow(reason);
  });

  it('refuses bytes that are not a PNG at all', () => {
    expect(() => splitPng(new TextEncoder().encode('hello, world'))).toThrow(/not a PNG/);
  });

  it('bounds the image from its header, before inflating: each side and the pixel count', () => {
    const blank = (width: number, height: number) => pngFromRaw({ width, height, depth: 8, colour: 6 }, new Uint8Array(height * (1 + width * 4)));
    expect(splitPng(blank(4096, 1024))).toMatchObject({ width: 4096, height: 1024 });
    expect(() => splitPng(blank(4097, 1))).toThrow(/at most 4096 on a side/);
    expect(() => splitPng(blank(1, 4097))).toThrow(/at most 4096 on a side/);
    expect(() => splitPng(blank(2049, 2049))).toThrow(/4194304 in all/);
    // The limits are a parameter: the same decoder bounds any image it is given.
    expect(() => splitPng(blank(20, 20), { maxSide: 10, maxPixels: 100 })).toThrow(/20×20 pixels/);
  });
});

describe('drawn signatures in the finished PDF', () => {
  const renderWith = async (o: PngOptions) => {
    const bytes = await makePdf(1);
    const r = await pdfLibRenderer.renderFinished({
      documents: [{ id: 'd', bytes }],
      fields: [field({ documentId: 'd', recipientId: 'bob', type: 'signature', x: 100, y: 200, width: 300, height: 100 })],
      signatures: { bob: { kind: 'drawn', value: drawnSignatureDataUrl(300, 100, o) } },
      testMode: false,
    })();
    if (E.isLeft(r)) throw new Error(r.left.detail);
    return r.right;
  };

  it('looks the same through the fast path (RGBA) as through pdf-lib’s decoder (palette)', async () => {
    const fast = await renderWith({ filter: 'mixed' });
    const general = await renderWith({ colour: 'palette' });
    for (const pdf of [fast, general]) {
      expect((await qpdfCheck(pdf)).code).toBe(0);
      expect((await pdfImages(pdf)).map((i) => i.type)).toEqual(['image', 'smask']);
    }
    // Same strokes, same place: the dark pixels of each band of the box agree.
    for (let y = 200; y < 300; y += 10) {
      const band = { x: 100, y, width: 300, height: 10 };
      const [a, b] = [await darkPixels(fast, 1, band), await darkPixels(general, 1, band)];
      expect(a, `band at ${y}`).toBe(b);
    }
    expect(await darkPixels(fast, 1, { x: 100, y: 200, width: 300, height: 100 })).toBeGreaterThan(500);
  });
});
