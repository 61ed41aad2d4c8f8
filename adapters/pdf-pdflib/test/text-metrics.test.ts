import type { PDFFont } from 'pdf-lib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { wrap } from '../src/certificate.js';
import { encodable } from '../src/fonts.js';
import { standardMetrics } from '../src/text-metrics.js';

let helvetica: PDFFont;
let bold: PDFFont;

beforeAll(async () => {
  const doc = await PDFDocument.create();
  helvetica = await doc.embedFont(StandardFonts.Helvetica);
  bold = await doc.embedFont(StandardFonts.HelveticaBold);
});

/** Kerned pairs (AV, To, Wa, LT, y.), WinAnsi beyond ASCII, a user agent, a digest. */
const SAMPLES = [
  'AVATAR To Wa LT y. "Yo" P, F. r. v,',
  'Zoë Müller — «Café» 100 € ½ ß Œuvre',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'a1'.repeat(32),
  '',
  ' ',
];

/** The certificate's wrap as it was, measuring every candidate line with pdf-lib. */
const referenceWrap = (text: string, font: PDFFont, size: number, width: number): string[] => {
  const fits = (s: string) => font.widthOfTextAtSize(s, size) <= width;
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(' ').filter((w) => w.length > 0)) {
    const candidate = line ? `${line} ${word}` : word;
    if (fits(candidate)) {
      line = candidate;
      continue;
    }
    if (line) lines.push(line);
    line = '';
    if (fits(word)) {
      line = word;
      continue;
    }
    let chunkWidth = 0;
    for (const ch of word) {
      const w = font.widthOfTextAtSize(ch, size);
      if (line && chunkWidth + w > width) {
        lines.push(line);
        line = '';
        chunkWidth = 0;
      }
      line += ch;
      chunkWidth += w;
    }
  }
  if (line) lines.push(line);
  return lines.length > 0 ? lines : [''];
};

describe('standardMetrics', () => {
  it('measures every string exactly as pdf-lib does, kerning included, at any size', () => {
    for (const font of [helvetica, bold])
      for (const s of SAMPLES)
        for (const size of [8, 9, 12, 20, 7.5]) expect(standardMetrics(font).units(s) * (size / 1000)).toBe(font.widthOfTextAtSize(s, size));
  });

  it('encodes every string to the WinAnsi codes pdf-lib draws', () => {
    for (const font of [helvetica, bold])
      for (const s of SAMPLES) expect(`<${standardMetrics(font).hex(s)}>`).toBe(font.encodeText(s).toString());
  });

  it('refuses a font that is not a standard one', () => {
    expect(() => standardMetrics({ name: 'DancingScript' } as PDFFont)).toThrow(/not one of the standard fonts/);
  });
});

describe('wrap with cached metrics', () => {
  it('breaks lines exactly where measuring each candidate with pdf-lib breaks them', () => {
    const texts = [...SAMPLES, encodable(helvetica, 'Agent/1 (日本語; 🦊)\n and more words'), `Agent/${'x'.repeat(400)} tail`, SAMPLES.join(' ')];
    for (const font of [helvetica, bold])
      for (const text of texts)
        for (const width of [40, 60, 150, 353.28, 483.28]) expect(wrap(text, font, 9, width), `${width}: ${text}`).toEqual(referenceWrap(text, font, 9, width));
  });
});
