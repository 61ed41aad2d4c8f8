import { crc32, deflateSync } from 'node:zlib';

const chunk = (type: string, data: Buffer): Buffer => {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([len, body, crc]);
};

const paeth = (a: number, b: number, c: number): number => {
  const p = a + b - c;
  const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
};

/** The PNG row filters, applied as an encoder does: each byte minus its predictor. */
const filterRow = (type: number, row: Uint8Array, prev: Uint8Array | null, bpp: number): Buffer => {
  const out = Buffer.alloc(row.length + 1);
  out[0] = type;
  for (let i = 0; i < row.length; i++) {
    const a = i >= bpp ? row[i - bpp]! : 0;
    const b = prev ? prev[i]! : 0;
    const c = prev && i >= bpp ? prev[i - bpp]! : 0;
    const pred = [0, a, b, (a + b) >> 1, paeth(a, b, c)][type]!;
    out[i + 1] = (row[i]! - pred) & 0xff;
  }
  return out;
};

export interface PngOptions {
  /** Row filter: one type for every row, or 'mixed' to cycle through all five. */
  readonly filter?: 0 | 1 | 2 | 3 | 4 | 'mixed';
  /** 8-bit RGBA (what canvases produce), 8-bit RGB, or a two-colour palette with a transparent entry. */
  readonly colour?: 'rgba' | 'rgb' | 'palette';
  /** Adam7-interlaced: seven sub-images, each filtered row by row. */
  readonly interlace?: boolean;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

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

/**
 * A PNG assembled from its parts: the header's fields as given and `raw` (the filtered scanlines, as they
 * are before compression) deflated into one IDAT. Lets a test build what no encoder would: a wrong filter
 * byte, a size that disagrees with the data.
 */
export const pngFromRaw = (h: { width: number; height: number; depth: number; colour: number; interlace?: number }, raw: Uint8Array): Buffer => {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(h.width, 0);
  ihdr.writeUInt32BE(h.height, 4);
  ihdr.set([h.depth, h.colour, 0, 0, h.interlace ?? 0], 8);
  return Buffer.concat([PNG_SIGNATURE, chunk('IHDR', ihdr), chunk('IDAT', deflateSync(raw)), chunk('IEND', Buffer.alloc(0))]);
};

/**
 * A real PNG of `width`×`height`; `pixel(x, y)` gives 0xRRGGBBAA. For 'rgb' alpha is dropped; for
 * 'palette' a pixel is ink (0x1a1a5aff) when its alpha is non-zero, transparent otherwise.
 */
export const encodePng = (width: number, height: number, pixel: (x: number, y: number) => number, o: PngOptions = {}): Buffer => {
  const colour = o.colour ?? 'rgba';
  const bpp = colour === 'rgba' ? 4 : colour === 'rgb' ? 3 : 1;
  const rows: Buffer[] = [];
  const sample = (x: number, y: number, row: Uint8Array, at: number) => {
    const v = pixel(x, y) >>> 0;
    if (colour === 'palette') row[at] = (v & 0xff) === 0 ? 0 : 1;
    else for (let k = 0; k < bpp; k++) row[at * bpp + k] = (v >>> (24 - 8 * k)) & 0xff;
  };
  // Each pass is an image of its own, filtered from its own first row on; without interlacing, one pass.
  const passes = o.interlace ? ADAM7 : ([[0, 0, 1, 1]] as const);
  let n = 0;
  for (const [x0, y0, dx, dy] of passes) {
    let prev: Uint8Array | null = null;
    const pw = Math.max(0, Math.ceil((width - x0) / dx));
    for (let y = y0; y < height && pw > 0; y += dy) {
      const row = new Uint8Array(pw * bpp);
      for (let i = 0; i < pw; i++) sample(x0 + i * dx, y, row, i);
      const filter = o.filter === 'mixed' ? n++ % 5 : (o.filter ?? 0);
      rows.push(filterRow(filter, row, prev, bpp));
      prev = row;
    }
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, colour === 'rgba' ? 6 : colour === 'rgb' ? 2 : 3, 0, 0, o.interlace ? 1 : 0], 8);
  const palette =
    colour === 'palette' ? [chunk('PLTE', Buffer.from([0, 0, 0, 0x1a, 0x1a, 0x5a])), chunk('tRNS', Buffer.from([0, 255]))] : [];
  return Buffer.concat([
    PNG_SIGNATURE,
    chunk('IHDR', ihdr),
    ...palette,
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
};

/** Dark-blue ink where `ink(x, y)`, transparent elsewhere: what a signature pad draws. */
export const inkPixels = (ink: (x: number, y: number) => boolean) => (x: number, y: number) => (ink(x, y) ? 0x1a1a5aff : 0);

/** A wavy stroke, as a signing pad would draw it. */
export const wave = (width: number, height: number) => (x: number, y: number) =>
  Math.abs(y - (height / 2 + (height / 4) * Math.sin(x / 12))) < 3;

/** A drawn signature as the signer API receives it: a PNG data URL. */
export const drawnSignatureDataUrl = (width = 300, height = 100, o: PngOptions = {}): string =>
  `data:image/png;base64,${encodePng(width, height, inkPixels(wave(width, height)), o).toString('base64')}`;

const dataUrl = (png: Uint8Array) => `data:image/png;base64,${Buffer.from(png).toString('base64')}`;

/**
 * Drawn signatures the signer API must refuse (as data URLs), by what is wrong with them: each one was
 * accepted once and then made the completed request unsealable, or took seconds and hundreds of MB to seal.
 */
export const hostileDrawnSignatures = (): Readonly<Record<string, string>> => {
  const good = encodePng(300, 100, inkPixels(wave(300, 100)));
  const idat = good.indexOf('IDAT');
  const corrupt = Buffer.from(good);
  // Bytes inside the deflate stream (past its 2-byte zlib header): the data no longer inflates.
  for (let i = idat + 8; i < idat + 24; i++) corrupt[i] = corrupt[i]! ^ 0x5a;
  const rgbaRows = (width: number, height: number, filter: number) => {
    const raw = new Uint8Array(height * (1 + width * 4));
    for (let y = 0; y < height; y++) raw[y * (1 + width * 4)] = filter;
    return raw;
  };
  return {
    'is only the PNG signature': dataUrl(good.subarray(0, 8)),
    'stops after its header': dataUrl(good.subarray(0, 33)),
    'is truncated inside its image data': dataUrl(good.subarray(0, idat + 40)),
    'has corrupt image data': dataUrl(corrupt),
    'uses an unknown row filter': dataUrl(pngFromRaw({ width: 40, height: 10, depth: 8, colour: 6 }, rgbaRows(40, 10, 7))),
    // 18 MB of 1-bit rows deflate to ~18 KB; decoded as RGBA they are 576 MB.
    'declares 12,000 × 12,000 pixels': dataUrl(pngFromRaw({ width: 12_000, height: 12_000, depth: 1, colour: 0 }, new Uint8Array(12_000 * 1_501))),
    // A small header over far more data than it implies: inflating must stop at the size the header gives.
    'holds far more image data than its header says': dataUrl(pngFromRaw({ width: 100, height: 100, depth: 8, colour: 6 }, rgbaRows(1_000, 2_000, 0))),
  };
};
