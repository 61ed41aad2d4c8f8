import { PDFDocument } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { internedEntries } from '../src/interned.js';
import { pdfLibInspector } from '../src/index.js';
import '../src/xref-refs.js';

/** A one-page PDF, its objects written in order, followed by `tail` (a cross-reference section of some kind). */
const onePage = (tail: (offsets: number[], at: number) => string): Uint8Array => {
  const objects = [
    '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n',
    '2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n',
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>\nendobj\n',
  ];
  let text = '%PDF-1.7\n';
  const offsets: number[] = [];
  for (const o of objects) {
    offsets.push(text.length);
    text += o;
  }
  return new TextEncoder().encode(text + tail(offsets, text.length));
};

const ENTRIES = 2_000_000;

describe('cross-reference entries', () => {
  // An attacker's review: 443 bytes naming 16 million entries filled pdf-lib's table of references (2^24), whose
  // entries a thread keeps for life, and no count of the file's objects saw them.
  it('of a cross-reference stream of millions of empty entries intern no reference each', async () => {
    const bytes = onePage(
      (_, at) =>
        `4 0 obj\n<< /Type /XRef /Size ${ENTRIES + 100} /W [0 0 0] /Index [100 ${ENTRIES}] /Root 1 0 R /Length 0 >>\nstream\n\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`,
    );
    expect(bytes.length).toBeLessThan(1024);
    const before = internedEntries();
    expect((await PDFDocument.load(bytes)).getPageCount()).toBe(1);
    expect(internedEntries() - before).toBeLessThan(100);
  });

  it('of a classic table intern no reference each, and a file with one reads as before', async () => {
    const count = 200_000;
    const bytes = onePage(
      (offsets, at) =>
        `xref\n0 ${count}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}` +
        Array.from({ length: count - 1 - offsets.length }, (_, i) => `0000000000 ${String(1 + (i % 60_000)).padStart(5, '0')} f \n`).join('') +
        `trailer\n<< /Size ${count} /Root 1 0 R >>\nstartxref\n${at}\n%%EOF\n`,
    );
    const before = internedEntries();
    expect(await pdfLibInspector.inspect(bytes, { maxPages: 10 })()).toEqual({ _tag: 'Right', right: { pageCount: 1, pageSizes: [{ width: 612, height: 792 }] } });
    // The inspection makes some of its own (the trial seal's objects), not one per entry.
    expect(internedEntries() - before).toBeLessThan(1_000);
  });
});
