import { deflateSync } from 'node:zlib';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import { createPdfWorkerPool } from '../src/index.js';

/**
 * A PDF whose one object stream holds `count` distinct names of `length` characters: a 6 KB file, read in about a
 * second, that pdf-lib keeps (twice: the name and its encoded form) for the thread's life, about 4 MB of heap.
 */
const longNames = (tag: string, count: number, length: number): Uint8Array => {
  const names = Array.from({ length: count }, (_, i) => `/${`${tag}x${i.toString(36)}`.padEnd(length, 'a')}`);
  const header = '5 0 ';
  const data = deflateSync(Buffer.from(`${header}[${names.join(' ')}]`, 'latin1'), { level: 9 });
  const objs = [
    '1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\n',
    '2 0 obj\n<< /Type /Pages /Kids [3 0 R] /Count 1 >>\nendobj\n',
    '3 0 obj\n<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Filler 5 0 R >>\nendobj\n',
  ];
  const chunks = [Buffer.from('%PDF-1.7\n', 'latin1')];
  const offsets: number[] = [];
  let off = chunks[0]!.length;
  for (const o of objs) {
    offsets.push(off);
    chunks.push(Buffer.from(o, 'latin1'));
    off += o.length;
  }
  offsets.push(off);
  const head = Buffer.from(`4 0 obj\n<< /Type /ObjStm /N 1 /First ${header.length} /Filter /FlateDecode /Length ${data.length} >>\nstream\n`, 'latin1');
  const tail = Buffer.from('\nendstream\nendobj\n', 'latin1');
  chunks.push(head, data, tail);
  off += head.length + data.length + tail.length;
  const rows = [[0, 0, 255], ...offsets.map((o) => [1, o, 0]), [2, 4, 0], [1, off, 0]];
  const table = Buffer.alloc(rows.length * 6);
  rows.forEach(([t, o, g], i) => (table.writeUInt8(t!, i * 6), table.writeUInt32BE(o!, i * 6 + 1), table.writeUInt8(g!, i * 6 + 5)));
  const xref = deflateSync(table);
  chunks.push(
    Buffer.from(`6 0 obj\n<< /Type /XRef /Size 7 /W [1 4 1] /Root 1 0 R /Filter /FlateDecode /Length ${xref.length} >>\nstream\n`, 'latin1'),
    xref,
    Buffer.from(`\nendstream\nendobj\nstartxref\n${off}\n%%EOF\n`, 'latin1'),
  );
  return new Uint8Array(Buffer.concat(chunks));
};

describe('names pdf-lib keeps on a thread, by the heap they hold', () => {
  // Scaled down: a 128 MiB heap where a server has 2 GiB. maxInternedNames counts entries, so long names hold a
  // thread's heap long before it is retired: 10 uploads of 6 KB, 10,000 entries, about 40 MB kept; the seal of
  // 10 documents of 500 pages, fine on a fresh thread of the same limit, then runs out of heap.
  it('do not make a later honest seal on the thread fail', async () => {
    const pool = createPdfWorkerPool({ threads: 1, maxHeapMb: 128 });
    const bytes = await makePdf(500);
    const ids = Array.from({ length: 10 }, (_, i) => `d${i}`);
    const seal = () =>
      pool.renderer.renderFinished({
        documents: ids.map((id) => ({ id, bytes })),
        fields: ids.flatMap((id) =>
          Array.from({ length: 500 }, (_, p) => ({ id: `${id}f${p}`, documentId: id, recipientId: 'ada', type: 'signature' as const, page: p + 1, x: 72, y: 600, width: 300, height: 100, required: true, value: true })),
        ),
        signatures: { ada: { kind: 'typed', value: 'Ada Lovelace' } },
        testMode: true,
      })();
    try {
      expect(E.isRight(await seal())).toBe(true);
      const read: boolean[] = [];
      for (let i = 0; i < 10; i++) read.push(E.isRight(await pool.inspector.inspect(longNames(`T${i}`, 1000, 2000), { maxPages: 10 })()));
      // Every upload is read, and its thread kept: far below maxInternedNames.
      expect(read).toEqual(read.map(() => true));
      expect(await seal()).toEqual(E.right(expect.any(Uint8Array)));
    } finally {
      await pool.close();
    }
  }, 300_000);
});
