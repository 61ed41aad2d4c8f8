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
}

/**
 * A real PNG of `width`×`height`; `pixel(x, y)` gives 0xRRGGBBAA. For 'rgb' alpha is dropped; for
 * 'palette' a pixel is ink (0x1a1a5aff) when its alpha is non-zero, transparent otherwise.
 */
export const encodePng = (width: number, height: number, pixel: (x: number, y: number) => number, o: PngOptions = {}): Buffer => {
  const colour = o.colour ?? 'rgba';
  const bpp = colour === 'rgba' ? 4 : colour === 'rgb' ? 3 : 1;
  const rows: Buffer[] = [];
  let prev: Uint8Array | null = null;
  for (let y = 0; y < height; y++) {
    const row = new Uint8Array(width * bpp);
    for (let x = 0; x < width; x++) {
      const v = pixel(x, y) >>> 0;
      if (colour === 'palette') row[x] = (v & 0xff) === 0 ? 0 : 1;
      else for (let k = 0; k < bpp; k++) row[x * bpp + k] = (v >>> (24 - 8 * k)) & 0xff;
    }
    const filter = o.filter === 'mixed' ? y % 5 : (o.filter ?? 0);
    rows.push(filterRow(filter, row, prev, bpp));
    prev = row;
  }
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr.set([8, colour === 'rgba' ? 6 : colour === 'rgb' ? 2 : 3, 0, 0, 0], 8);
  const palette =
    colour === 'palette' ? [chunk('PLTE', Buffer.from([0, 0, 0, 0x1a, 0x1a, 0x5a])), chunk('tRNS', Buffer.from([0, 255]))] : [];
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
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
