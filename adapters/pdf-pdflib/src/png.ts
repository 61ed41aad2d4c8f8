import { constants, deflateSync, inflateSync } from 'node:zlib';
import type { PDFDocument, PDFPage, PDFRef } from 'pdf-lib';
import { PDFName, concatTransformationMatrix, drawObject, popGraphicsState, pushGraphicsState } from 'pdf-lib';
import { SIGNATURE_IMAGE_LIMITS } from '@esig/core';
import { RenderError } from './render-failure.js';

/** An image's colour and (when not fully opaque) alpha planes, uncompressed, one byte per sample. */
export interface PngPlanes {
  readonly width: number;
  readonly height: number;
  readonly rgb: Uint8Array;
  readonly alpha: Uint8Array | null;
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

/**
 * Reverses one row's PNG filter (PNG spec, 9.2) into `px` at `row`, from the filtered `line`; `up` is the
 * previous row's offset in `px` (-1 for the first row) and `bpp` the bytes per pixel. One tight loop per
 * filter type, the first pixel apart: the Uint8Array stores each sum modulo 256. A loop deciding the filter
 * and the neighbours per byte took most of a seal's time with a few drawn signatures.
 */
const unfilterRow = (filter: number, line: Uint8Array, px: Uint8Array, row: number, up: number, bpp: number): void => {
  const n = line.length;
  switch (filter) {
    case 0:
      px.set(line, row);
      return;
    case 1:
      for (let i = 0; i < bpp; i++) px[row + i] = line[i]!;
      for (let i = bpp; i < n; i++) px[row + i] = line[i]! + px[row + i - bpp]!;
      return;
    case 2:
      if (up < 0) px.set(line, row);
      else for (let i = 0; i < n; i++) px[row + i] = line[i]! + px[up + i]!;
      return;
    case 3:
      if (up < 0) {
        for (let i = 0; i < bpp; i++) px[row + i] = line[i]!;
        for (let i = bpp; i < n; i++) px[row + i] = line[i]! + (px[row + i - bpp]! >> 1);
      } else {
        for (let i = 0; i < bpp; i++) px[row + i] = line[i]! + (px[up + i]! >> 1);
        for (let i = bpp; i < n; i++) px[row + i] = line[i]! + ((px[row + i - bpp]! + px[up + i]!) >> 1);
      }
      return;
    default:
      // Paeth: with no row above it is Sub; on the first pixel (a = c = 0) it picks b.
      if (up < 0) {
        for (let i = 0; i < bpp; i++) px[row + i] = line[i]!;
        for (let i = bpp; i < n; i++) px[row + i] = line[i]! + px[row + i - bpp]!;
        return;
      }
      for (let i = 0; i < bpp; i++) px[row + i] = line[i]! + px[up + i]!;
      for (let i = bpp; i < n; i++) {
        const a = px[row + i - bpp]!;
        const b = px[up + i]!;
        const c = px[up + i - bpp]!;
        // |p − a|, |p − b|, |p − c| for p = a + b − c, without forming p.
        const pa = Math.abs(b - c);
        const pb = Math.abs(a - c);
        const pc = Math.abs(a + b - c - c);
        px[row + i] = line[i]! + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
  }
};

/**
 * Decodes a PNG, within `limits` (checked from the header before anything is inflated; inflating is
 * bounded by the size the header implies). 8-bit RGB or RGBA, not interlaced — what browsers' canvases
 * produce — is decoded here with node:zlib, several times faster than pdf-lib's pure-JavaScript decoder
 * on signature-sized images. Any other well-formed PNG (palette, grey, 16-bit, interlaced) returns null,
 * its image data proven to inflate to exactly its size, for pdf-lib's general embedder. Throws RenderError
 * on anything else: not a PNG, too large, truncated, corrupt, an unknown row filter.
 */
export const decodePng = (bytes: Uint8Array, limits: ImageLimits = SIGNATURE_IMAGE_LIMITS): PngPlanes | null => {
  const { header, idat } = readPng(bytes, limits);
  const raw = inflateBounded(idat, inflatedSize(header));
  const { width, height, depth, colour, interlaced } = header;
  if (depth !== 8 || interlaced || (colour !== 2 && colour !== 6)) return null;
  const channels = colour === 6 ? 4 : 3;
  const stride = width * channels;
  const px = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]!;
    if (filter > 4) fail(`The PNG uses an unknown filter type ${filter}.`);
    unfilterRow(filter, raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1)), px, y * stride, y > 0 ? (y - 1) * stride : -1, channels);
  }

  if (channels === 3) return { width, height, rgb: px, alpha: null };
  const pixels = width * height;
  const rgb = new Uint8Array(pixels * 3);
  const alpha = new Uint8Array(pixels);
  let opaque = true;
  for (let p = 0, i = 0, o = 0; p < pixels; p++, i += 4, o += 3) {
    rgb[o] = px[i]!;
    rgb[o + 1] = px[i + 1]!;
    rgb[o + 2] = px[i + 2]!;
    const a = px[i + 3]!;
    alpha[p] = a;
    if (a !== 255) opaque = false;
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
      // Run-length matching only: signature planes are long runs of one value, which it finds at a quarter of
      // the default strategy's time, for images about half again as large (a few kB each).
      ctx.stream(deflateSync(samples, { strategy: constants.Z_RLE }), {
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
