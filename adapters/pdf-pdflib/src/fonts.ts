import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import fontkit from '@pdf-lib/fontkit';
import type { Color, PDFDocument, PDFFont, PDFPage } from 'pdf-lib';

const SIGNATURE_FONT = '@expo-google-fonts/dancing-script/400Regular/DancingScript_400Regular.ttf';
/**
 * A fixed subset tag keeps the output byte-identical for identical input; pdf-lib would otherwise append a
 * random suffix to the font name.
 */
const SIGNATURE_FONT_NAME = 'ESIGDS+DancingScript-Regular';

let signatureFontBytes: Promise<Uint8Array> | undefined;

/** The handwriting font's bytes, read once per process. */
const loadSignatureFontBytes = (): Promise<Uint8Array> => {
  if (!signatureFontBytes) {
    // Resolved lazily, inside the promise, so a missing package is a render failure rather than an import crash.
    signatureFontBytes = (async () => readFile(createRequire(import.meta.url).resolve(SIGNATURE_FONT)))();
    // A failed read is not cached: the next render tries again.
    signatureFontBytes.catch(() => {
      signatureFontBytes = undefined;
    });
  }
  return signatureFontBytes;
};

type Fontkit = Parameters<PDFDocument['registerFontkit']>[0];
type FontkitFont = ReturnType<Fontkit['create']>;

let parsed: { readonly bytes: Uint8Array; readonly font: FontkitFont } | undefined;

/**
 * fontkit, parsing a font once per process rather than once per document. pdf-lib asks fontkit to parse the
 * font file for every document that embeds it; fontkit then decodes its tables (glyph outlines,
 * substitution and positioning lookups) lazily, on the first layouts, which made laying out the first
 * typed signatures of each finished document the costly ones. The parsed font is only read from:
 * each document's embedder keeps its own subset and glyph map.
 */
const sharedFontkit: Fontkit = {
  create: (bytes, postscriptName) => {
    if (parsed?.bytes !== bytes || postscriptName !== undefined) parsed = { bytes, font: fontkit.create(bytes, postscriptName) };
    return parsed.font;
  },
};

/** Embeds Dancing Script (subset to the glyphs used) for typed signatures and initials. */
export const embedSignatureFont = async (doc: PDFDocument): Promise<PDFFont> => {
  doc.registerFontkit(sharedFontkit);
  return doc.embedFont(await loadSignatureFontBytes(), { subset: true, customName: SIGNATURE_FONT_NAME });
};

const charsets = new WeakMap<PDFFont, ReadonlySet<number>>();
const charsetOf = (font: PDFFont): ReadonlySet<number> => {
  let set = charsets.get(font);
  if (!set) {
    set = new Set(font.getCharacterSet());
    charsets.set(font, set);
  }
  return set;
};

/**
 * Never drawn, whatever a font's character map claims: C0 and C1 controls, unpaired surrogates and
 * noncharacters. Dancing Script maps NUL and U+FFFF to glyphs that break its subsetting when the PDF is
 * saved, so one such character in a signer's text made a completed request unsealable.
 */
const NEVER_DRAWN = /[\p{Cc}\p{Cs}\p{Noncharacter_Code_Point}]/u;

/**
 * Makes user input drawable with a font whose character set is `charset`: line breaks and tabs become
 * spaces, and every other character the font cannot encode (emoji, CJK for the WinAnsi standard fonts,
 * controls, unpaired surrogates) becomes '?'. Iterates by code point, so an emoji is one '?', not two.
 */
export const sanitizeForCharset = (charset: ReadonlySet<number>, text: string): string => {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    const cp = ch.codePointAt(0)!;
    if (/\s/u.test(ch)) out += ' ';
    else out += charset.has(cp) && !NEVER_DRAWN.test(ch) ? ch : '?';
  }
  return out;
};

/** `sanitizeForCharset` with the font's own character set. */
export const encodable = (font: PDFFont, text: string): string => sanitizeForCharset(charsetOf(font), text);

/** A rectangle in the page's displayed space: origin at the bottom-left, as pdf-lib draws. */
export interface Box {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

export interface FitOptions {
  readonly font: PDFFont;
  readonly color: Color;
  /** Upper bound on the font size, so a tall box does not get giant text. */
  readonly maxSize: number;
  /** Inner margin on every side. */
  readonly padding: number;
}

/**
 * Draws one line of already-encodable text inside `box`, left-aligned and vertically centred, at the largest
 * size (up to `maxSize`) at which it fits both the box's width and its height (descenders included).
 */
export const drawFittedText = (page: PDFPage, text: string, box: Box, o: FitOptions): void => {
  const padding = Math.min(o.padding, box.width / 4, box.height / 4);
  const innerWidth = box.width - 2 * padding;
  const innerHeight = box.height - 2 * padding;
  const unitWidth = o.font.widthOfTextAtSize(text, 1);
  const size = Math.min(o.maxSize, o.font.sizeAtHeight(innerHeight), unitWidth > 0 ? innerWidth / unitWidth : o.maxSize);
  if (!(size > 0)) return;
  const total = o.font.heightAtSize(size);
  const descent = total - o.font.heightAtSize(size, { descender: false });
  page.drawText(text, {
    x: box.x + padding,
    y: box.y + (box.height - total) / 2 + descent,
    size,
    font: o.font,
    color: o.color,
  });
};
