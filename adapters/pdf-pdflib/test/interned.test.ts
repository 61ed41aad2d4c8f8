import { PDFDocument, PDFName, PDFRef } from 'pdf-lib';
import { describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import { internedEntries, internedTablesFound } from '../src/interned.js';
import runTask from '../src/worker.js';

describe('pdf-lib’s interned names and references', () => {
  it('are found and counted in the pinned pdf-lib: each new name and reference adds one, a name seen before none', () => {
    expect(internedTablesFound()).toBe(true);
    const before = internedEntries();
    for (let i = 0; i < 1000; i++) PDFName.of(`CountedName${i}`);
    for (let i = 0; i < 500; i++) PDFRef.of(7_000_000 + i, 3);
    PDFName.of('CountedName1');
    expect(internedEntries() - before).toBe(1500);
  });

  it('grow with every distinct name a file holds, and the worker asks to retire its thread once past the limit', async () => {
    // An upload whose one page names 20,000 names no other file does: each stays in pdf-lib's table for the
    // thread's life. The reviewer's two 17 MB uploads of such names filled the table (2^24) and poisoned the thread.
    // The file is made with names this thread then never sees again: each P… becomes a Q… of the same length in
    // the saved bytes, so only reading the file makes the Q… names.
    const stamp = `${process.pid}x${Date.now()}`;
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]).node.set(PDFName.of('Filler'), doc.context.obj(Array.from({ length: 20_000 }, (_, i) => PDFName.of(`P${stamp}x${i}`))));
    const bytes = Buffer.from(Buffer.from(await doc.save({ useObjectStreams: false })).toString('latin1').replaceAll(`/P${stamp}`, `/Q${stamp}`), 'latin1');
    const limits = { maxPages: 10 };
    // An ordinary file within the limit: the thread is kept.
    const kept = await runTask({ task: { kind: 'inspect', bytes: await makePdf(1), limits }, maxInterned: internedEntries() + 10_000 });
    expect(kept).toEqual({ result: { facts: expect.objectContaining({ pageCount: 1 }) }, retire: false });
    const before = internedEntries();
    const answer = await runTask({ task: { kind: 'inspect', bytes, limits }, maxInterned: before + 10_000 });
    expect(internedEntries() - before).toBeGreaterThanOrEqual(20_000);
    expect(answer).toEqual({ result: { facts: expect.objectContaining({ pageCount: 1 }) }, retire: true });
  });
});
