/**
 * `npm run bench:latency [-- --iterations 30 --warmup 3 --pages 10 --db sqlite|postgres]`
 *
 * What a user waits for: from the last signature (the signing POST's answer, through the real server over
 * HTTP) until the finished PDF can be downloaded (GET …/document answers 200, asked every 2 ms). The server
 * runs in its own process in the default configuration (in-process workers, default poll interval), so the
 * figure includes the job pickup, the seal and the commit of its result. Beside it, in the same run,
 * pdf-lib alone loading the same document, copying its pages into a new one and saving it: the floor.
 * `--db postgres` adds the same on a throwaway PostgreSQL database.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { PDFDocument } from 'pdf-lib';
import { createKeyStandalone, loadConfig } from '@esig/server';
import { makePdf } from '@esig/testkit/pdf';
import { percentile, POSTGRES_URL_OPTION, startProcess, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '30' },
    warmup: { type: 'string', default: '3' },
    pages: { type: 'string', default: '10' },
    db: { type: 'string', default: 'sqlite' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const iterations = Number(values.iterations);
const warmup = Number(values.warmup);
const pages = Number(values.pages);
const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-latency-'));
const pdf = await makePdf(pages, 'Latency agreement');

const pdfLibFloor = async () => {
  const t = performance.now();
  const src = await PDFDocument.load(pdf);
  const out = await PDFDocument.create();
  for (const p of await out.copyPages(src, src.getPageIndices())) out.addPage(p);
  await out.save();
  return performance.now() - t;
};

const until = async <T>(probe: () => Promise<T | undefined>, what: string, everyMs: number): Promise<T> => {
  const give = Date.now() + 60_000;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > give) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
};

/** One request through the API up to its last signature; resolves to the ms until its PDF downloads. */
const oneRound = async (url: string, key: string, i: number): Promise<number> => {
  const api = async (method: string, path: string, body?: unknown, raw?: Uint8Array) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(raw ? { 'content-type': 'application/pdf' } : body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
    });
    const text = await res.text();
    return { status: res.status, body: text === '' || !(res.headers.get('content-type') ?? '').includes('json') ? text : JSON.parse(text) };
  };
  const doc = (await api('POST', `/api/v1/documents?name=latency-${i}.pdf`, undefined, pdf)).body;
  const req = (await api('POST', '/api/v1/signature-requests', { title: `Latency ${i}`, documentIds: [doc.id] })).body;
  const email = `signer-${i}-${randomBytes(3).toString('hex')}@example.com`;
  const rcp = (await api('POST', `/api/v1/signature-requests/${req.id}/recipients`, { email, firstName: 'Ada', lastName: 'Lovelace' })).body;
  await api('POST', `/api/v1/signature-requests/${req.id}/fields`, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: pages, x: 72, y: 600, width: 200, height: 50 });
  const sent = await api('POST', `/api/v1/signature-requests/${req.id}/send`);
  if (sent.status !== 200) throw new Error(`send: ${sent.status} ${JSON.stringify(sent.body)}`);
  const token = await until(
    async () => {
      const mails = (await api('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(email)}&limit=10`)).body.data as Array<{ text: string }>;
      return mails.map((m) => /\/sign\/([A-Za-z0-9]{43,})/.exec(m.text)?.[1]).find((t) => t !== undefined);
    },
    'the invitation',
    5,
  );
  const signed = await fetch(`${url}/api/v1/signing/${token}/sign`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } }),
  });
  const t0 = performance.now();
  if (signed.status !== 200) throw new Error(`sign: ${signed.status} ${await signed.text()}`);
  await signed.arrayBuffer();
  await until(
    async () => {
      const r = await fetch(`${url}/api/v1/signature-requests/${req.id}/document`, { headers: { authorization: `Bearer ${key}` } });
      await r.arrayBuffer();
      return r.status === 200 ? true : undefined;
    },
    'the finished PDF',
    2,
  );
  return performance.now() - t0;
};

const runOn = async (label: string, databaseUrl: string, extra: Record<string, string>) => {
  const env: Record<string, string> = {
    ...(process.env as Record<string, string>),
    ESIG_DATABASE_URL: databaseUrl,
    ESIG_PORT: '0',
    ESIG_HOST: '127.0.0.1',
    ESIG_LOG_LEVEL: 'error',
    ESIG_DATA_DIR: dir,
    ESIG_PUBLIC_URL: 'http://esig.bench',
    ESIG_RATE_LIMIT_KEY: '100000000',
    ESIG_RATE_LIMIT_ORG: '100000000',
    ...extra,
  };
  const issued = await createKeyStandalone(loadConfig(env), { orgName: 'bench', mode: 'test', scopes: ['*'], name: 'bench' });
  const esig = await startProcess([join(root, 'examples/server/bin/esig.mjs'), 'serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/);
  const url = `http://127.0.0.1:${esig.match[1]}`;
  const esigMs: number[] = [];
  const floorMs: number[] = [];
  try {
    for (let i = 0; i < warmup + iterations; i++) {
      // Alternating, so both see the same machine load.
      const e = await oneRound(url, issued.secret, i);
      const f = await pdfLibFloor();
      if (i >= warmup) {
        esigMs.push(e);
        floorMs.push(f);
      }
    }
  } finally {
    await esig.stop();
  }
  const row = (name: string, xs: number[]) => `${name.padEnd(58)} ${percentile(xs, 50).toFixed(1).padStart(8)} ${percentile(xs, 99).toFixed(1).padStart(8)}`;
  process.stdout.write(`\n${'scenario'.padEnd(58)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)}\n`);
  process.stdout.write(`${row(`esig last signature → PDF downloadable (${label})`, esigMs)}\n`);
  process.stdout.write(`${row(`pdf-lib load+copy+save, same ${pages}-page document`, floorMs)}\n`);
  process.stdout.write(`ratio p50: ${(percentile(esigMs, 50) / percentile(floorMs, 50)).toFixed(1)}×\n`);
};

let drop = async () => undefined as void;
try {
  process.stdout.write(`esig bench:latency — ${iterations} rounds (+${warmup} warm-up), ${pages}-page document, 1 signer; server in its own process, in-process workers\n`);
  await runOn('SQLite', `sqlite:${join(dir, 'esig.db')}`, {});
  if (values.db === 'postgres') {
    const pg = await throwawayPostgres(values['postgres-url']);
    drop = pg.drop;
    await runOn('PostgreSQL', pg.url, { ESIG_MASTER_KEY: randomBytes(32).toString('hex') });
  }
} finally {
  await drop();
  rmSync(dir, { recursive: true, force: true });
}
