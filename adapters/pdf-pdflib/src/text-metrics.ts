import type { PDFFont } from 'pdf-lib';
import { StandardFontEmbedder, StandardFonts } from 'pdf-lib';

/**
 * A standard font's widths and WinAnsi codes, asked of pdf-lib once per character and once per pair of
 * neighbours, then kept for the process. pdf-lib measures and encodes a string glyph by glyph on every call
 * (a glyph-name lookup per character, a kerning-table search per pair, fresh objects for each); laying out
 * the certificate did that for every candidate line and again for every line drawn, which was most of its
 * time.
 *
 * Widths are in the font's units (1/1000 em). The standard fonts' widths and kerning amounts are integers,
 * so sums of them are exact and `units(s) * (size / 1000)` is exactly pdf-lib's `widthOfTextAtSize(s,
 * size)`: lines break where they broke before.
 *
 * Only for the 14 standard fonts (their metrics depend on the name alone), and only for encodable text
 * (see `encodable`): every character is one UTF-16 unit there.
 */
export class StandardFontMetrics {
  private readonly widths = new Map<string, number>();
  private readonly kerns = new Map<string, number>();
  private readonly codes = new Map<string, string>();

  /** pdf-lib's own embedder for the font, outside any document. */
  private readonly font: StandardFontEmbedder;

  constructor(name: StandardFonts) {
    // pdf-lib's StandardFonts and the FontNames its embedder takes are the same strings.
    this.font = StandardFontEmbedder.for(name as unknown as Parameters<typeof StandardFontEmbedder.for>[0]);
  }

  /** pdf-lib's width of `s` in font units: at size 1000 its scale is exactly 1. */
  private measured = (s: string): number => this.font.widthOfTextAtSize(s, 1000);

  /** A character's advance width. */
  width = (ch: string): number => {
    let w = this.widths.get(ch);
    if (w === undefined) {
      w = this.measured(ch);
      this.widths.set(ch, w);
    }
    return w;
  };

  /** The kerning between two neighbours: what measuring them together adds to their widths. */
  kern = (left: string, right: string): number => {
    const pair = left + right;
    let k = this.kerns.get(pair);
    if (k === undefined) {
      k = this.measured(pair) - this.width(left) - this.width(right);
      this.kerns.set(pair, k);
    }
    return k;
  };

  /** The width of `s`, kerning included, as pdf-lib measures it. */
  units = (s: string): number => {
    let total = 0;
    for (let i = 0; i < s.length; i++) {
      total += this.width(s[i]!);
      if (i + 1 < s.length) total += this.kern(s[i]!, s[i + 1]!);
    }
    return total;
  };

  /** `s` as the hexadecimal string of its WinAnsi codes, as pdf-lib's `drawText` shows it. */
  hex = (s: string): string => {
    let out = '';
    for (const ch of s) {
      let code = this.codes.get(ch);
      if (code === undefined) {
        // pdf-lib's PDFHexString prints as <…>.
        code = this.font.encodeText(ch).toString().slice(1, -1);
        this.codes.set(ch, code);
      }
      out += code;
    }
    return out;
  };
}

const byName = new Map<string, StandardFontMetrics>();
const STANDARD: ReadonlySet<string> = new Set(Object.values(StandardFonts));

/** The metrics of a standard font (embedded with `embedFont(StandardFonts.X)`), shared by every document. */
export const standardMetrics = (font: PDFFont): StandardFontMetrics => {
  let m = byName.get(font.name);
  if (!m) {
    if (!STANDARD.has(font.name)) throw new Error(`${font.name} is not one of the standard fonts.`);
    m = new StandardFontMetrics(font.name as StandardFonts);
    byName.set(font.name, m);
  }
  return m;
};
