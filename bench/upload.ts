/**
 * `npm run bench:upload [-- --pages 20,200,500 --iterations 20 --warmup 3]`
 *
 * What reading an upload costs: the inspector (the page tree and every page's size, encryption, the count of
 * distinct names and references, and the trial seal that stamps every page as sealing will), on the calling
 * thread, for a PDF of each size. Beside it, in the same run and alternating with it, pdf-lib alone loading the
 * file and copying its pages into a new document and saving it (what the trial seal must do at least): the floor
 * under any inspector that proves a file can be sealed.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import { PDFDocument, ParseSpeeds } from 'pdf-lib';
import { pdfLibInspector } from '@esig/pdf-pdflib';
import { makePdf } from '@esig/testkit/pdf';
import { percentile } from './lib.js';

const { values } = parseArgs({
  options: {
    pages: { type: 'string', default: '20,200,500' },
    iterations: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);

/** pdf-lib alone: load without pauses, copy every page into a new document, save without pauses. */
const pdfLibAlone = async (bytes: Uint8Array): Promise<number> => {
  const src = await PDFDocument.load(bytes, { parseSpeed: ParseSpeeds.Fastest });
  const out = await PDFDocument.create();
  for (const p of await out.copyPages(src, src.getPageIndices())) out.addPage(p);
  return (await out.save({ objectsPerTick: Number.POSITIVE_INFINITY })).length;
};

const inspect = async (bytes: Uint8Array, pages: number): Promise<void> => {
  const r = await pdfLibInspector.inspect(bytes, { maxPages: pages })();
  if (E.isLeft(r)) throw new Error(r.left.detail);
  if (r.right.pageCount !== pages) throw new Error(`counted ${r.right.pageCount} pages, not ${pages}`);
};

console.log(`upload inspection on the calling thread, ${iterations} iterations after ${warmup} warm-up, alternating with pdf-lib alone\n`);
console.log('pages  bytes      inspector p50   pdf-lib alone p50   ratio   inspector p90');
for (const pages of values.pages.split(',').map(Number)) {
  const bytes = await makePdf(pages);
  const mine: number[] = [];
  const floor: number[] = [];
  for (let i = 0; i < warmup + iterations; i++) {
    // Alternating which goes first keeps a warm or cold cache from favouring one side.
    for (const which of i % 2 === 0 ? (['floor', 'mine'] as const) : (['mine', 'floor'] as const)) {
      const t0 = performance.now();
      if (which === 'mine') await inspect(bytes, pages);
      else await pdfLibAlone(bytes);
      const ms = performance.now() - t0;
      if (i >= warmup) (which === 'mine' ? mine : floor).push(ms);
    }
  }
  const m = percentile(mine, 50);
  const f = percentile(floor, 50);
  console.log(
    `${String(pages).padStart(5)}  ${String(bytes.length).padEnd(9)}  ${m.toFixed(1).padStart(9)} ms   ${f.toFixed(1).padStart(12)} ms   ${(m / f).toFixed(2).padStart(5)}×  ${percentile(mine, 90).toFixed(1).padStart(9)} ms`,
  );
}
