import { deflateSync, inflateSync } from 'node:zlib';
import type { PDFDocument, PDFPage, PDFRef } from 'pdf-lib';
import { PDFName, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';

/** An image's colour and (when not fully opaque) alpha planes, uncompressed, one byte per sample. */
export interface PngPlanes {
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
  readonly alpha: Uint8Array | null;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/**
 * Decodes the PNGs browsers' canvases produce (8-bit RGB or RGBA, not interlaced) with node:zlib, which is
 * several times faster than pdf-lib's pure-JavaScript decoder and compressor on signature-sized images.
 * Returns null for any other kind of PNG (palette, 16-bit, grey, interlaced) or for bytes that are not a
 * PNG, so the caller can fall back to pdf-lib; throws on a PNG whose image data is corrupt.
 */
export const decodePng = (bytes: Uint8Array): PngPlanes | null => {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b)) return null;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat: Uint8Array[] = [];
  for (let pos = 8; pos + 8 <= bytes.length; ) {
    const length = view.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const data = bytes.subarray(pos + 8, pos + 8 + length);
    if (data.length !== length) throw new Error('The PNG is truncated.');
    if (type === 'IHDR') {
      if (length !== 13) return null;
      width = view.getUint32(pos + 8);
      height = view.getUint32(pos + 12);
      const [depth, colour, , , interlace] = data.subarray(8);
      if (depth !== 8 || interlace !== 0 || (colour !== 2 && colour !== 6)) return null;
      channels = colour === 6 ? 4 : 3;
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') break;
    pos += 12 + length;
  }
  if (channels === 0 || width === 0 || height === 0) return null;

  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  if (raw.length < (stride + 1) * height) throw new Error('The PNG image data is truncated.');
  const px = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    const line = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = y * stride;
    const up = row - stride;
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? px[row + i - channels]! : 0;
      const b = y > 0 ? px[up + i]! : 0;
      const c = y > 0 && i >= channels ? px[up + i - channels]! : 0;
      const predictor =
        filter === 0 ? 0 : filter === 1 ? a : filter === 2 ? b : filter === 3 ? (a + b) >> 1 : filter === 4 ? paeth(a, b, c) : -1;
      if (predictor < 0) throw new Error(`The PNG uses an unknown filter type ${filter}.`);
      px[row + i] = (line[i]! + predictor) & 0xff;
    }
  }

  if (channels === 3) return { width, height, rgb: px, alpha: null };
  const rgb = new Uint8Array(width * height * 3);
  const alpha = new Uint8Array(width * height);
  let opaque = true;
  for (let p = 0; p < width * height; p++) {
    rgb[p * 3] = px[p * 4]!;
    rgb[p * 3 + 1] = px[p * 4 + 1]!;
    rgb[p * 3 + 2] = px[p * 4 + 2]!;
    alpha[p] = px[p * 4 + 3]!;
    if (alpha[p] !== 255) opaque = false;
  }
  return { width, height, rgb, alpha: opaque ? null : alpha };
};

/** An image embedded once and drawable at any rectangle of any page of its document. */
export interface Drawable {
  readonly width: number;
  readonly height: number;
  draw(page: PDFPage, r: { x: number; y: number; width: number; height: number }): void;
}

/** Embeds decoded planes as an image XObject (with a soft mask for the alpha), compressed by node:zlib. */
export const embedPlanes = (doc: PDFDocument, p: PngPlanes): Drawable => {
  const ctx = doc.context;
  const image = (samples: Uint8Array, colourSpace: string, extra: Record<string, PDFRef> = {}) =>
    ctx.register(
      ctx.stream(deflateSync(samples), {
        Type: 'XObject',
        Subtype: 'Image',
        Width: p.width,
        Height: p.height,
        BitsPerComponent: 8,
        ColorSpace: colourSpace,
        Filter: 'FlateDecode',
        ...extra,
      }),
    );
  const ref = image(p.rgb, 'DeviceRGB', p.alpha ? { SMask: image(p.alpha, 'DeviceGray') } : {});
  return {
    width: p.width,
    height: p.height,
    draw: (page, r) => {
      // pdf-lib's own drawImage names its XObjects the same way (a seeded, hence reproducible, suffix).
      const key = ctx.addRandomSuffix('Image', 10);
      page.node.setXObject(PDFName.of(key), ref);
      page.pushOperators(pushGraphicsState(), concatTransformationMatrix(r.width, 0, 0, r.height, r.x, r.y), drawObject(key), popGraphicsState());
    },
  };
};
