import type { FieldProblem } from '../../errors.js';
import type { AdoptedSignature, FieldValue } from '../../model/signature-request.js';
import { SIGNATURE_IMAGE_LIMITS } from '../../model/signature-request.js';

const PNG_DATA_URL = /^data:image\/png;base64,([A-Za-z0-9+/]+={0,2})$/;
const PNG_MAGIC = '\x89PNG\r\n\x1a\n';
/** Signature, IHDR length and type, and IHDR's 13 bytes: 33 bytes, the first 44 base64 characters. */
const HEAD_BASE64_CHARS = 44;

/**
 * Characters no font draws and no one types: C0 and C1 controls other than tab, line feed and carriage
 * return (which are drawn as spaces), unpaired surrogates and noncharacters. The handwriting font maps NUL
 * and U+FFFF to glyphs that break its subsetting, so one such character in a typed signature used to make
 * the completed request unsealable.
 */
const UNDRAWABLE = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\p{Cs}\p{Noncharacter_Code_Point}]/u;

/** Whether `text` holds a character that cannot be stamped (see UNDRAWABLE). */
export const hasUndrawableText = (text: string): boolean => UNDRAWABLE.test(text);

const UNDRAWABLE_MESSAGE = 'must not contain control characters (other than tab and line breaks), unpaired surrogates or noncharacters';

const drawnProblem = (message: string): FieldProblem => ({ path: 'signature.value', message });

/**
 * Reads width and height from a PNG's first chunk, which must be its header (IHDR), without decoding
 * anything else: enough to refuse an image too large to decode before anyone inflates it.
 */
const pngHeader = (base64: string): { width: number; height: number } | null => {
  const head = atob(base64.slice(0, HEAD_BASE64_CHARS));
  if (head.length < 33 || !head.startsWith(PNG_MAGIC) || head.slice(12, 16) !== 'IHDR') return null;
  const u32 = (at: number) => ((head.charCodeAt(at) << 24) >>> 0) + (head.charCodeAt(at + 1) << 16) + (head.charCodeAt(at + 2) << 8) + head.charCodeAt(at + 3);
  return u32(8) === 13 ? { width: u32(16), height: u32(20) } : null;
};

/**
 * The cheap checks of a signature the sealing step must be able to stamp: typed text of 1–200 characters
 * that a font can draw, or a drawn PNG as a data URL whose header declares a size within
 * SIGNATURE_IMAGE_LIMITS. The StampPreflight port then decodes and lays out all of it; these checks only
 * spare it the obvious cases (and refuse a decompression bomb from its header alone).
 */
export const checkAdoptedSignature = (s: AdoptedSignature): FieldProblem | null => {
  if (s.kind === 'typed') {
    const n = s.value.trim().length;
    if (n < 1 || n > 200) return { path: 'signature.value', message: 'a typed signature has 1 to 200 characters' };
    return hasUndrawableText(s.value) ? { path: 'signature.value', message: UNDRAWABLE_MESSAGE } : null;
  }
  const m = PNG_DATA_URL.exec(s.value);
  if (!m || m[1]!.length % 4 !== 0) return drawnProblem('a drawn signature is a data:image/png;base64 URL');
  // The alphabet and length were checked above, so atob cannot throw here.
  const size = pngHeader(m[1]!);
  if (size === null) return drawnProblem('the drawn signature is not a PNG image');
  const { maxSide, maxPixels } = SIGNATURE_IMAGE_LIMITS;
  if (size.width < 1 || size.height < 1 || size.width > maxSide || size.height > maxSide || size.width * size.height > maxPixels)
    return drawnProblem(`the drawn signature is ${size.width}×${size.height} pixels; at most ${maxSide} on a side and ${maxPixels} in all`);
  return null;
};

/** The cheap checks of the values a signer gives: text a font can draw. */
export const checkFieldValues = (values: Readonly<Record<string, FieldValue>>): FieldProblem[] =>
  Object.entries(values)
    .filter(([, v]) => typeof v === 'string' && hasUndrawableText(v))
    .map(([id]) => ({ path: `values.${id}`, message: UNDRAWABLE_MESSAGE }));
