/**
 * `npm run bench:complete [-- --iterations 20 --warmup 3]`
 *
 * The time to finish a completed request of 100 pages (10 documents of 10 pages) and 10 signers (5 typed,
 * 5 drawn signatures, each with a date and a text field): the finished PDF, its SHA-256 and the evidence
 * certificate (~60 events). Beside it, in the same run and alternating with it, pdf-lib alone loading the
 * same 10 PDFs, copying their pages into one document and saving it: the floor any pdf-lib renderer stands on.
 */
import { createHash } from 'node:crypto';
import { cpus } from 'node:os';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import type { TaskEither } from 'fp-ts/lib/TaskEither.js';
import { PDFDocument, ParseSpeeds } from 'pdf-lib';
import type { AdoptedSignature, CertificateData, DocumentRenderer, Field, FinishedDocumentInput } from '@esig/core';
import { createPdfWorkerPool, pdfLibRenderer } from '@esig/pdf-pdflib';
import { makePdf } from '@esig/testkit/pdf';
import { encodePng, inkPixels } from '@esig/testkit/png';
import { openPipeline } from './seal-pipeline.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '20' },
    warmup: { type: 'string', default: '3' },
    /** Seals handed to the worker-thread pool at once, for the throughput rows (comma-separated). */
    parallel: { type: 'string', default: '1,2,4' },
    threads: { type: 'string', default: String(Math.max(1, cpus().length)) },
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);

const DOCUMENTS = 10;
const PAGES = 10;
const SIGNERS = 10;

interface Fixture {
  readonly finished: FinishedDocumentInput;
  /** Without the finished document's digest, which the timed section computes. */
  readonly certificate: CertificateData;
}

const at = (seconds: number) => new Date(Date.UTC(2026, 10, 23, 8, 0, 0) + seconds * 1000).toISOString();

/** A canvas-sized drawn signature (600×200, a wavy stroke per signer), as the signing page posts it. */
const drawn = (phase: number): AdoptedSignature => ({
  kind: 'drawn',
  value: `data:image/png;base64,${encodePng(600, 200, inkPixels((x, y) => Math.abs(y - (100 + 60 * Math.sin(x / 25 + phase) * Math.cos(x / 90))) < 4), { filter: 'mixed' }).toString('base64')}`,
});

const buildFixture = async (): Promise<Fixture> => {
  const documents = await Promise.all(
    Array.from({ length: DOCUMENTS }, async (_, d) => ({ id: `doc_${d + 1}`, bytes: await makePdf(PAGES, `Agreement part ${d + 1}`) })),
  );
  const signers = Array.from({ length: SIGNERS }, (_, i) => ({ id: `rcp_${i + 1}`, name: `Signer Number${i + 1}`, email: `signer${i + 1}@example.com` }));
  const signatures: Record<string, AdoptedSignature> = {};
  const fields: Field[] = [];
  signers.forEach((s, i) => {
    signatures[s.id] = i < SIGNERS / 2 ? { kind: 'typed', value: s.name } : drawn(i);
    const base = { documentId: `doc_${i + 1}`, recipientId: s.id, required: true };
    fields.push(
      { ...base, id: `fld_${i}_sig`, type: 'signature', page: PAGES, x: 72, y: 620, width: 220, height: 60, value: null },
      { ...base, id: `fld_${i}_date`, type: 'date_signed', page: PAGES, x: 320, y: 640, width: 120, height: 20, value: '2026-11-23' },
      { ...base, id: `fld_${i}_text`, type: 'text', page: 1, x: 72, y: 160, width: 300, height: 20, value: `Purchase order ${4700 + i}` },
    );
  });

  const ua = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
  const events: CertificateData['events'][number][] = [
    { at: at(0), action: 'created', recipientId: null, actor: null, ip: '203.0.113.1', userAgent: 'esig-sdk/1.0', details: {} },
    { at: at(1), action: 'sent', recipientId: null, actor: null, ip: '203.0.113.1', userAgent: 'esig-sdk/1.0', details: {} },
  ];
  signers.forEach((s, i) =>
    (['notified', 'opened', 'viewed', 'otp_sent', 'authenticated', 'signed'] as const).forEach((action, k) =>
      events.push({
        at: at(60 * (i + 1) + k),
        action,
        recipientId: s.id,
        actor: `${s.name} <${s.email}>`,
        ip: action === 'notified' ? null : `198.51.100.${i + 10}`,
        userAgent: action === 'notified' ? null : ua,
        details: {},
      }),
    ),
  );
  events.push({ at: at(900), action: 'completed', recipientId: null, actor: null, ip: null, userAgent: null, details: {} });

  return {
    finished: { documents, fields, signatures, testMode: false },
    certificate: {
      certificateId: 'coc_01JDBENCHCERTIFICATE00001',
      requestId: 'req_01JDBENCHREQUEST000000001',
      title: 'Framework agreement (bench)',
      testMode: false,
      requestedSignatureLevel: 'SES',
      createdAt: at(0),
      sentAt: at(1),
      completedAt: at(900),
      documents: documents.map((d) => ({ id: d.id, name: `${d.id}.pdf`, pageCount: PAGES, sha256: createHash('sha256').update(d.bytes).digest('hex') })),
      finishedDocumentSha256: '',
      recipients: signers.map((s, i) => ({
        id: s.id,
        name: s.name,
        email: s.email,
        role: 'signer' as const,
        authentication: 'email_otp',
        signedAt: at(60 * (i + 1) + 5),
        signatureKind: signatures[s.id]!.kind,
      })),
      events,
    },
  };
};

const run = async <A>(te: TaskEither<{ detail: string }, A>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(r.left.detail);
  return r.right;
};

/**
 * The timed section: everything finishing a request costs once its data is loaded. `lap` is told when
 * each step ends, for the breakdown.
 */
const finishRequest = async (renderer: DocumentRenderer, f: Fixture, lap: (step: string) => void = () => {}) => {
  const finished = await run(renderer.renderFinished(f.finished));
  lap('renderFinished');
  const sha256 = createHash('sha256').update(finished).digest('hex');
  const certificate = await run(renderer.renderCertificate({ ...f.certificate, finishedDocumentSha256: sha256 }, f.finished.testMode));
  lap('renderCertificate');
  return { finished, certificate };
};

/**
 * The baseline: pdf-lib loading the same PDFs, copying every page into one document and saving it, with
 * pdf-lib's defaults; `noPauses` with the renderer's load and save settings (no timer every 100 objects
 * parsed and 50 written: see adapters/pdf-pdflib/src/save.ts), the fairer floor for it.
 */
const pdfLibAlone = async (docs: FinishedDocumentInput['documents'], noPauses = false): Promise<Uint8Array> => {
  const out = await PDFDocument.create();
  for (const d of docs) {
    const src = await PDFDocument.load(d.bytes, noPauses ? { parseSpeed: ParseSpeeds.Fastest } : {});
    for (const p of await out.copyPages(src, src.getPageIndices())) out.addPage(p);
  }
  return out.save(noPauses ? { objectsPerTick: Number.POSITIVE_INFINITY } : {});
};

const timed = async <A>(fn: () => Promise<A>): Promise<[number, A]> => {
  const t0 = performance.now();
  const a = await fn();
  return [performance.now() - t0, a];
};

const quantile = (xs: readonly number[], q: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]!;
};

const fixture = await buildFixture();
const samples: Record<string, number[]> = { complete: [], renderFinished: [], renderCertificate: [], baseline: [], baselineNoPauses: [] };
let sizes = { finished: 0, certificate: 0, baseline: 0 };

for (let i = 0; i < warmup + iterations; i++) {
  const record = i >= warmup;
  // Alternating which goes first keeps a warm or cold cache from favouring one side.
  const order = i % 2 === 0 ? ['baseline', 'baselineNoPauses', 'complete'] : ['complete', 'baselineNoPauses', 'baseline'];
  for (const which of order) {
    if (which === 'baseline' || which === 'baselineNoPauses') {
      const [ms, out] = await timed(() => pdfLibAlone(fixture.finished.documents, which === 'baselineNoPauses'));
      if (record) samples[which]!.push(ms);
      sizes = { ...sizes, baseline: out.length };
    } else {
      let last = performance.now();
      const laps: Record<string, number> = {};
      const [ms, out] = await timed(() =>
        finishRequest(pdfLibRenderer, fixture, (step) => {
          const now = performance.now();
          laps[step] = now - last;
          last = now;
        }),
      );
      if (record) {
        samples.complete!.push(ms);
        for (const [step, t] of Object.entries(laps)) samples[step]!.push(t);
      }
      sizes = { ...sizes, finished: out.finished.length, certificate: out.certificate.length };
      if (i === 0) {
        const pages = (await PDFDocument.load(out.finished)).getPageCount();
        if (pages !== DOCUMENTS * PAGES) throw new Error(`the finished document has ${pages} pages, not ${DOCUMENTS * PAGES}`);
      }
    }
  }
}

// The full finishing step as the worker runs it (load from SQLite, render, store, commit with the event and
// the job's completion), on fresh completed requests built outside the timing.
const pipelineRounds = Math.min(iterations, 10);
const pipeline = await openPipeline(
  fixture.finished.documents.map((d) => d.bytes),
  Object.values(fixture.finished.signatures),
);
samples.pipeline = [];
for (let i = 0; i < pipelineRounds + 1; i++) {
  const job = await pipeline.prepare();
  const [ms] = await timed(() => pipeline.finish(job));
  if (i > 0) samples.pipeline.push(ms);
}
pipeline.close();

const kb = (n: number) => `${(n / 1024).toFixed(0)} kB`;
const rows: [string, string, string][] = [
  [`esig: the seal job end to end on SQLite (${pipelineRounds} rounds)`, 'pipeline', 'load + render + store + commit'],
  ['esig: finish a request (finished PDF + SHA-256 + certificate)', 'complete', `${kb(sizes.finished)} + ${kb(sizes.certificate)}`],
  ['  of which renderFinished', 'renderFinished', kb(sizes.finished)],
  ['  of which renderCertificate (incl. SHA-256)', 'renderCertificate', kb(sizes.certificate)],
  ['pdf-lib alone: load 10 PDFs, copy 100 pages, save', 'baseline', kb(sizes.baseline)],
  ['pdf-lib alone, without its timer pauses (the renderer\'s settings)', 'baselineNoPauses', kb(sizes.baseline)],
];
const pad = (s: string, n: number) => s.padEnd(n);
process.stdout.write(
  `\n${DOCUMENTS * PAGES} pages in ${DOCUMENTS} documents, ${SIGNERS} signers (5 typed, 5 drawn), ` +
    `${fixture.finished.fields.length} fields, ${fixture.certificate.events.length} events; ` +
    `${iterations} iterations after ${warmup} warm-up; Node ${process.version}, ${cpus()[0]?.model ?? 'unknown CPU'}\n\n`,
);
process.stdout.write(`${pad('scenario', 64)} ${pad('median ms', 10)} ${pad('p90 ms', 8)} output\n`);
for (const [name, key, out] of rows) {
  const xs = samples[key]!;
  process.stdout.write(`${pad(name, 64)} ${pad(quantile(xs, 0.5).toFixed(1), 10)} ${pad(quantile(xs, 0.9).toFixed(1), 8)} ${out}\n`);
}
process.stdout.write(`\nesig / pdf-lib alone (medians): ${(quantile(samples.complete!, 0.5) / quantile(samples.baseline!, 0.5)).toFixed(2)}×`);
process.stdout.write(`; esig / pdf-lib without pauses: ${(quantile(samples.complete!, 0.5) / quantile(samples.baselineNoPauses!, 0.5)).toFixed(2)}×\n`);

// Throughput: several requests finished at once on the worker-thread pool, as the server's workers hand
// them over; beside it pdf-lib alone, the same number at once on the same threads' worth of main thread.
const threads = Number(values.threads);
const pool = createPdfWorkerPool({ threads, niceIncrement: 0 });
try {
  process.stdout.write(`\nseveral at once on the PDF worker pool (${threads} threads, ${cpus().length} cores):\n`);
  process.stdout.write(`${pad('at once', 10)} ${pad('finished/s', 12)} ${pad('median ms each', 16)}\n`);
  for (const k of values.parallel.split(',').map(Number)) {
    const rounds = Math.max(2, Math.ceil(iterations / k));
    const each: number[] = [];
    await Promise.all(Array.from({ length: k }, () => finishRequest(pool.renderer, fixture)));
    const t0 = performance.now();
    for (let r = 0; r < rounds; r++)
      await Promise.all(
        Array.from({ length: k }, async () => {
          const [ms] = await timed(() => finishRequest(pool.renderer, fixture));
          each.push(ms);
        }),
      );
    const seconds = (performance.now() - t0) / 1000;
    process.stdout.write(`${pad(String(k), 10)} ${pad(((rounds * k) / seconds).toFixed(1), 12)} ${pad(quantile(each, 0.5).toFixed(1), 16)}\n`);
  }
} finally {
  await pool.close();
}
