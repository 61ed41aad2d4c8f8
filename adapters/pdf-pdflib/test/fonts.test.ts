import { PDFDocument, StandardFonts } from 'pdf-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { wrap } from '../src/certificate.js';
import { embedSignatureFont, sanitizeForCharset } from '../src/fonts.js';

let winAnsi: ReadonlySet<number>;
let script: ReadonlySet<number>;
let helvetica: Awaited<ReturnType<PDFDocument['embedFont']>>;

beforeAll(async () => {
  const doc = await PDFDocument.create();
  helvetica = await doc.embedFont(StandardFonts.Helvetica);
  winAnsi = new Set(helvetica.getCharacterSet());
  script = new Set((await embedSignatureFont(doc)).getCharacterSet());
});

describe('sanitizeForCharset', () => {
  it('keeps what WinAnsi encodes, the em dash included', () => {
    expect(sanitizeForCharset(winAnsi, 'Zoë Müller — «Café» 100 €')).toBe('Zoë Müller — «Café» 100 €');
  });

  it('replaces each emoji with one "?", even astral ones made of two UTF-16 units', () => {
    expect(sanitizeForCharset(winAnsi, 'Ana 😀🏠 ok')).toBe('Ana ?? ok');
  });

  it('replaces CJK characters one for one', () => {
    expect(sanitizeForCharset(winAnsi, '東京タワー Tokyo')).toBe('????? Tokyo');
  });

  it('turns line breaks and tabs into spaces', () => {
    expect(sanitizeForCharset(winAnsi, 'a\nb\r\nc\td')).toBe('a b  c d');
  });

  it('composes decomposed accents first, so they stay encodable', () => {
    expect(sanitizeForCharset(winAnsi, 'Zoe\u0308')).toBe('Zoë');
  });

  it('uses the handwriting font’s own coverage for typed signatures', () => {
    expect(sanitizeForCharset(script, 'Łukasz Żółć 李')).toBe('Łukasz Żółć ?');
    expect(sanitizeForCharset(winAnsi, 'Łukasz')).toBe('?ukasz');
  });
});

describe('wrap', () => {
  it('breaks at spaces, keeps every line within the width, and loses no word', () => {
    const text = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    const lines = wrap(text, helvetica, 9, 150);
    expect(lines.length).toBeGreaterThan(2);
    for (const l of lines) expect(helvetica.widthOfTextAtSize(l, 9)).toBeLessThanOrEqual(150);
    expect(lines.join(' ')).toBe(text);
  });

  it('breaks a word longer than a line between characters', () => {
    const word = 'f'.repeat(30) + 'W'.repeat(30);
    const lines = wrap(word, helvetica, 9, 60);
    for (const l of lines) expect(helvetica.widthOfTextAtSize(l, 9)).toBeLessThanOrEqual(60);
    expect(lines.join('')).toBe(word);
  });

  it('gives one empty line for empty text', () => {
    expect(wrap('', helvetica, 9, 100)).toEqual(['']);
  });
});
