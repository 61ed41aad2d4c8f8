import { inflateSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { saveFast } from '../src/save.js';
import { qpdfCheck, qpdfNormalized } from './tools.js';

/** The same document every time: 120 pages (three object streams' worth of objects), text on each. */
const build = async (): Promise<PDFDocument> => {
  const doc = await PDFDocument.create({ updateMetadata: false });
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let i = 1; i <= 120; i++) doc.addPage([300, 400]).drawText(`Page ${i}: the quick brown fox`, { x: 20, y: 200, size: 12, font });
  return doc;
};

const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1');

describe('saveFast', () => {
  it('writes the objects pdf-lib’s own save writes, packed in compressed object streams', async () => {
    const fast = await saveFast(await build());
    const reference = await (await build()).save({ objectsPerTick: Number.POSITIVE_INFINITY });
    expect((await qpdfCheck(fast)).code).toBe(0);
    expect(await qpdfNormalized(fast)).toBe(await qpdfNormalized(reference));

    // Object streams of at most 50 objects each, as pdf-lib packs them, and a cross-reference stream.
    const text = latin1(fast);
    const objStms = [...text.matchAll(/<<\s*\/Type\s*\/ObjStm\s*\/N\s+(\d+)[^>]*\/Filter\s*\/FlateDecode[^>]*>>\s*stream\n/g)];
    expect(objStms.length).toBeGreaterThanOrEqual(3);
    for (const m of objStms) expect(Number(m[1])).toBeLessThanOrEqual(50);
    expect(text).toMatch(/\/Type\s*\/XRef/);
  });

  it('compresses each object stream with zlib: it inflates to the objects it lists', async () => {
    const text = latin1(await saveFast(await build()));
    const m = /<<\s*\/Type\s*\/ObjStm\s*\/N\s+(\d+)\s*\/First\s+(\d+)[^>]*\/Length\s+(\d+)[^>]*>>\s*stream\n/.exec(text);
    expect(m).not.toBeNull();
    const start = m!.index + m![0].length;
    const body = inflateSync(Buffer.from(text.slice(start, start + Number(m![3])), 'latin1')).toString('latin1');
    // The header is N pairs of object number and offset.
    expect(body.slice(0, Number(m![2])).trim().split(/\s+/)).toHaveLength(2 * Number(m![1]));
  });
});
