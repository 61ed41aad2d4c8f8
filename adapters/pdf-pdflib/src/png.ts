import { constants, deflateSync, inflateSync } from 'node:zlib';
import type { PDFDocument, PDFPage, PDFRef } from 'pdf-lib';
import { PDFName, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';
import { SIGNATURE_IMAGE_LIMITS } from '@esig/core';
import { RenderError } from './render-failure.js';

/**
 * An 8-bit image's colour and (when not fully opaque) alpha planes, as PNG-filtered rows: each row is its
 * filter type byte, then its samples as the filter left them (PNG spec, 9.2). PDF's FlateDecode undoes the
 * same filters (PNG predictors, `/Predictor 15`), so the planes are embedded without being unfiltered here.
 */
export interface FilteredPlanes {
  readonly width: number;
  readonly height: number;
  /** One byte per row, then three per pixel. */
  readonly rgb: Uint8Array;
  /** One byte per row, then one per pixel; null when every pixel is opaque. */
  readonly alpha: Uint8Array | null;
  /** The colour plane already deflated (an RGB PNG's own image data), or null to deflate `rgb`. */
  readonly rgbDeflated: Uint8Array | null;
}

/** The largest image decoded: width and height each, and their product. */
export interface ImageLimits {
  readonly maxSide: number;
  readonly maxPixels: number;
}

const SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];

/** Samples per pixel by colour type, and the bit depths each type allows (PNG spec, table 11.1). */
const COLOUR_TYPES: Readonly<Record<number, { channels: number; depths: readonly number[] }>> = {
  0: { channels: 1, depths: [1, 2, 4, 8, 16] },
  2: { channels: 3, depths: [8, 16] },
  3: { channels: 1, depths: [1, 2, 4, 8] },
  4: { channels: 2, depths: [8, 16] },
  6: { channels: 4, depths: [8, 16] },
};

/** Adam7's passes: first column and row, and the steps between them. */
const ADAM7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

export interface PngHeader {
  readonly width: number;
  readonly height: number;
  readonly depth: number;
  readonly colour: number;
  readonly interlaced: boolean;
}

const fail = (message: string): never => {
  throw new RenderError(message);
};

/**
 * The exact length of a PNG's image data once inflated: one filter byte plus the packed samples per row,
 * for each of the seven sub-images when interlaced. Known from the header alone, so inflating can be
 * bounded by it.
 */
export const inflatedSize = (h: PngHeader): number => {
  const bitsPerPixel = COLOUR_TYPES[h.colour]!.channels * h.depth;
  const scanlines = (width: number, rows: number) => (width === 0 || rows === 0 ? 0 : rows * (1 + Math.ceil((width * bitsPerPixel) / 8)));
  if (!h.interlaced) return scanlines(h.width, h.height);
  return ADAM7.reduce(
    (n, [x0, y0, dx, dy]) => n + scanlines(Math.max(0, Math.ceil((h.width - x0) / dx)), Math.max(0, Math.ceil((h.height - y0) / dy))),
    0,
  );
};

/**
 * Reads a PNG's chunks without decoding them: its header, checked against the format and `limits`, and
 * its image data (IDAT) joined. Throws RenderError on anything that is not a well-formed PNG header, or on
 * an image larger than the limits, before any image data is inflated.
 */
export const readPng = (bytes: Uint8Array, limits: ImageLimits = SIGNATURE_IMAGE_LIMITS): { header: PngHeader; idat: Buffer } => {
  if (bytes.length < 8 || SIGNATURE.some((b, i) => bytes[i] !== b)) fail('The image is not a PNG.');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header: PngHeader | null = null;
  const idat: Uint8Array[] = [];
  let ended = false;
  for (let pos = 8; pos < bytes.length && !ended; ) {
    if (pos + 8 > bytes.length) fail('The PNG is truncated.');
    const length = view.getUint32(pos);
    const type = String.fromCharCode(...bytes.subarray(pos + 4, pos + 8));
    const data = bytes.subarray(pos + 8, pos + 8 + length);
    if (data.length !== length) fail('The PNG is truncated.');
    if (header === null && type !== 'IHDR') fail('The PNG does not start with its header (IHDR).');
    if (type === 'IHDR') {
      if (header !== null) fail('The PNG has two headers.');
      if (length !== 13) fail('The PNG header has the wrong length.');
      const [depth, colour, compression, filter, interlace] = data.subarray(8);
      header = { width: view.getUint32(pos + 8), height: view.getUint32(pos + 12), depth: depth!, colour: colour!, interlaced: interlace === 1 };
      const kind = COLOUR_TYPES[header.colour];
      if (!kind || !kind.depths.includes(header.depth) || compression !== 0 || filter !== 0 || interlace! > 1)
        fail('The PNG header declares an unknown image format.');
      const { width, height } = header;
      if (width < 1 || height < 1) fail('The PNG has no pixels.');
      if (width > limits.maxSide || height > limits.maxSide || width * height > limits.maxPixels)
        fail(`The image is ${width}×${height} pixels; at most ${limits.maxSide} on a side and ${limits.maxPixels} in all.`);
    } else if (type === 'IDAT') idat.push(data);
    else if (type === 'IEND') ended = true;
    pos += 12 + length;
  }
  if (header === null) fail('The PNG has no header.');
  if (idat.length === 0) fail('The PNG has no image data.');
  if (!ended) fail('The PNG is truncated (no IEND).');
  return { header: header!, idat: Buffer.concat(idat) };
};

/**
 * Inflates image data to exactly `size` bytes: more is refused before it is produced (a decompression bomb
 * stops at the bound), less is a truncated image.
 */
export const inflateBounded = (data: Uint8Array, size: number): Buffer => {
  let raw: Buffer;
  try {
    // 64 KiB output chunks: with the default 16 KiB, inflating a signature-sized image took four times as long.
    raw = inflateSync(data, { maxOutputLength: Math.max(size, 1), chunkSize: 64 * 1024 });
  } catch (e) {
    const code = (e as { code?: string }).code;
    throw new RenderError(
      code === 'ERR_BUFFER_TOO_LARGE' ? 'The PNG image data is larger than its header says.' : `The PNG image data is corrupt (${(e as Error).message}).`,
    );
  }
  if (raw.length < size) fail('The PNG image data is truncated.');
  return raw;
};

/** The PNG filters' prediction of a byte from its left, upper and upper-left neighbours (PNG spec, 9.2-9.4). */
const predict = (filter: number, a: number, b: number, c: number): number => {
  switch (filter) {
    case 1:
      return a;
    case 2:
      return b;
    case 3:
      return (a + b) >> 1;
    case 4: {
      const p = a + b - c;
      const pa = Math.abs(p - a);
      const pb = Math.abs(p - b);
      const pc = Math.abs(p - c);
      return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    }
    default:
      return 0;
  }
};

/**
 * Whether filtered alpha rows stand for an image that is opaque everywhere, without unfiltering them. Row
 * by row, assuming the rows above are all 255 (true of the first row's missing predecessor only as zeros):
 * a row of 255s filters to one value at its first byte and one value everywhere after it, both fixed by
 * the filter type and whether there is a row above. The filters are one-to-one given the row above, so
 * matching those two values on every row is exactly "every alpha is 255".
 */
const opaque = (alpha: Uint8Array, width: number, height: number): boolean => {
  const stride = width + 1;
  for (let y = 0; y < height; y++) {
    const row = y * stride;
    const f = alpha[row]!;
    const up = y > 0 ? 255 : 0;
    const first = (255 - predict(f, 0, up, 0)) & 0xff;
    const rest = (255 - predict(f, 255, up, up)) & 0xff;
    if (alpha[row + 1] !== first) return false;
    for (let i = row + 2; i < row + stride; i++) if (alpha[i] !== rest) return false;
  }
  return true;
};

/**
 * Reads a PNG for embedding, within `limits` (checked from the header before anything is inflated;
 * inflating is bounded by the size the header implies). 8-bit RGB or RGBA, not interlaced — what browsers'
 * canvases produce — comes back as filtered planes (see FilteredPlanes): an RGBA image's rows split into
 * colour and alpha, filter bytes kept, no pixel unfiltered; an RGB image's own compressed data as it is.
 * Undoing the filters was most of an image's cost, and PDF readers undo them anyway. Any other well-formed
 * PNG (palette, grey, 16-bit, interlaced) returns null, its image data proven to inflate to exactly its
 * size, for pdf-lib's general embedder. Throws RenderError on anything else: not a PNG, too large,
 * truncated, corrupt, an unknown row filter.
 */
export const splitPng = (bytes: Uint8Array, limits: ImageLimits = SIGNATURE_IMAGE_LIMITS): FilteredPlanes | null => {
  const { header, idat } = readPng(bytes, limits);
  const raw = inflateBounded(idat, inflatedSize(header));
  const { width, height, depth, colour, interlaced } = header;
  if (depth !== 8 || interlaced || (colour !== 2 && colour !== 6)) return null;
  const channels = colour === 6 ? 4 : 3;
  const stride = 1 + width * channels;
  for (let y = 0; y < height; y++) {
    const filter = raw[y * stride]!;
    if (filter > 4) fail(`The PNG uses an unknown filter type ${filter}.`);
  }
  if (channels === 3) return { width, height, rgb: raw, alpha: null, rgbDeflated: idat };

  // Each filter predicts a byte from the same channel of the pixels to its left and above, so the colour
  // and alpha samples, taken apart with their row's filter type, are themselves correctly filtered rows.
  const rgb = new Uint8Array(height * (1 + width * 3));
  const alpha = new Uint8Array(height * (1 + width));
  for (let y = 0, i = 0, o = 0, p = 0; y < height; y++) {
    const filter = raw[i++]!;
    rgb[o++] = filter;
    alpha[p++] = filter;
    for (let x = 0; x < width; x++, i += 4, o += 3, p++) {
      rgb[o] = raw[i]!;
      rgb[o + 1] = raw[i + 1]!;
      rgb[o + 2] = raw[i + 2]!;
      alpha[p] = raw[i + 3]!;
    }
  }
  return { width, height, rgb, alpha: opaque(alpha, width, height) ? null : alpha, rgbDeflated: null };
};

/** An image embedded once and drawable at any rectangle of any page of its document. */
export interface Drawable {
  readonly width: number;
  readonly height: number;
  draw(page: PDFPage, r: { x: number; y: number; width: number; height: number }): void;
}

/**
 * Embeds filtered planes as an image XObject (with a soft mask for the alpha): FlateDecode with the PNG
 * predictors, compressed by node:zlib (or the PNG's own compressed data, for an RGB image).
 */
export const embedPlanes = (doc: PDFDocument, p: FilteredPlanes): Drawable => {
  const ctx = doc.context;
  const image = (deflated: Uint8Array, colourSpace: string, colours: number, extra: Record<string, PDFRef> = {}) =>
    ctx.register(
      ctx.stream(deflated, {
        Type: 'XObject',
        Subtype: 'Image',
        Width: p.width,
        Height: p.height,
        BitsPerComponent: 8,
        ColorSpace: colourSpace,
        Filter: 'FlateDecode',
        // 15: each row carries its own PNG filter type.
        DecodeParms: { Predictor: 15, Colors: colours, BitsPerComponent: 8, Columns: p.width },
        ...extra,
      }),
    );
  // Run-length matching only: filtered signature planes are long runs of zeros, which it finds at a
  // seventh of the default strategy's time, for images a kilobyte or two larger.
  const deflate = (rows: Uint8Array) => deflateSync(rows, { strategy: constants.Z_RLE });
  const ref = image(p.rgbDeflated ?? deflate(p.rgb), 'DeviceRGB', 3, p.alpha ? { SMask: image(deflate(p.alpha), 'DeviceGray', 1) } : {});
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
