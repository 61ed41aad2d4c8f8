/**
 * `npm run bench:api [-- --duration 10 --connections 16]`
 *
 * Create-request throughput and latency through the real server (composition root, SQLite file), beside a
 * bare Express handler that parses the same JSON and answers 201, measured in the same run on the same
 * machine. The gap between the two is what esig itself costs: auth, rate limiting, validation, the
 * transaction, the outbox write.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import express from 'express';
import * as E from 'fp-ts/Either';
import { execute, inspectUpload, uploadDocument } from '@esig/core';
import { T, loadConfig, startServer } from '@esig/server';
import { makePdf } from '@esig/testkit/pdf';

const { values } = parseArgs({
  options: { duration: { type: 'string', default: '10' }, connections: { type: 'string', default: '16' }, db: { type: 'string', default: 'sqlite' } },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
if (values.db !== 'sqlite') {
  console.error(`--db ${values.db}: this build benchmarks the SQLite store only.`);
  process.exit(2);
}

interface Figures {
  readonly name: string;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly non2xx: number;
}

const run = async (name: string, opts: autocannon.Options): Promise<Figures> => {
  const r = await autocannon({ connections, duration, ...opts });
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx + r.errors };
};

// ---- Baseline: a bare Express handler ---------------------------------------------------------------
const bare = express();
bare.use(express.json());
bare.post('/bare', (req, res) => void res.status(201).json({ id: 'req_x', title: req.body.title, status: 'DRAFT' }));
const bareServer = bare.listen(0, '127.0.0.1');
await new Promise((r) => bareServer.once('listening', r));
const bareUrl = `http://127.0.0.1:${(bareServer.address() as AddressInfo).port}`;

// ---- esig on a SQLite file ----------------------------------------------------------------------------
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-'));
const running = await startServer(
  loadConfig({
    ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`,
    ESIG_PORT: '0',
    ESIG_HOST: '127.0.0.1',
    ESIG_LOG_LEVEL: 'error',
    ESIG_RATE_LIMIT_KEY: '100000000',
    ESIG_RATE_LIMIT_ORG: '100000000',
  }),
  () => undefined,
);
const key = running.bootstrap!.secret;
const principalDeps = running.container;

// Every request needs its own uploaded document (a document joins at most one request), so seed plenty,
// straight through the core in large transactions (seeding is not what is measured).
const seedDocuments = async (n: number): Promise<string[]> => {
  const deps = {
    uow: principalDeps.resolve(T.UnitOfWork),
    stores: principalDeps.resolve(T.Stores),
    clock: principalDeps.resolve(T.Clock),
    ids: principalDeps.resolve(T.Ids),
    crypto: principalDeps.resolve(T.Crypto),
    pdf: principalDeps.resolve(T.Pdf),
  };
  const auth = await (await import('@esig/core')).authenticate(deps)(key)();
  if (E.isLeft(auth)) throw new Error('bench key did not authenticate');
  const inspected = await inspectUpload(deps)(auth.right, await makePdf(1))();
  if (E.isLeft(inspected)) throw new Error('seed PDF refused');
  const ids: string[] = [];
  for (let done = 0; done < n; done += 1000) {
    const r = await execute(deps)((tx) => async () => {
      for (let i = done; i < Math.min(n, done + 1000); i++) {
        const d = await uploadDocument(deps)(auth.right, { name: `seed-${i}.pdf`, pdf: inspected.right })(tx)();
        if (E.isLeft(d)) return d;
        ids.push(d.right.id);
      }
      return E.right(undefined);
    })();
    if (E.isLeft(r)) throw new Error(`seeding failed: ${r.left._tag}`);
  }
  return ids;
};

const createRequests = (docs: string[], idempotent: boolean): autocannon.Options => {
  let next = 0;
  return {
    url: running.url,
    amount: docs.length,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/signature-requests',
        setupRequest: (req) => {
          const i = next++;
          return {
            ...req,
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              ...(idempotent ? { 'idempotency-key': `bench-${i}` } : {}),
            },
            body: JSON.stringify({ title: `Bench ${i}`, documentIds: [docs[i % docs.length]] }),
          };
        },
      },
    ],
  };
};

try {
  process.stdout.write(`esig bench:api — ${connections} connections, ${duration} s per scenario, SQLite at ${dir}\n`);
  const figures: Figures[] = [];
  figures.push(await run('bare Express handler (baseline)', { url: `${bareUrl}/bare`, method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Bench', documentIds: ['doc_x'] }) }));

  // Warm up once so both esig scenarios run on a JIT-warm process, as the baseline does after its first second.
  const warm = await seedDocuments(500);
  await run('warm-up', { ...createRequests(warm, false), duration: 2 });

  const estimate = Math.ceil(figures[0]!.rps * duration * 1.2);
  const docsA = await seedDocuments(Math.min(estimate, 60_000));
  figures.push(await run('esig POST /signature-requests', { ...createRequests(docsA, false), duration }));
  const docsB = await seedDocuments(Math.min(estimate, 60_000));
  figures.push(await run('esig POST /signature-requests + Idempotency-Key', { ...createRequests(docsB, true), duration }));

  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`\n${pad('scenario', 50)} ${pad('req/s', 9)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('requests', 9)} non-2xx\n`);
  for (const f of figures)
    process.stdout.write(`${pad(f.name, 50)} ${pad(f.rps.toFixed(0), 9)} ${pad(String(f.p50), 8)} ${pad(String(f.p99), 8)} ${pad(String(f.requests), 9)} ${f.non2xx}\n`);
  const base = figures[0]!;
  for (const f of figures.slice(1)) process.stdout.write(`${f.name}: ${((f.rps / base.rps) * 100).toFixed(1)} % of the baseline's throughput\n`);
} finally {
  await running.close();
  bareServer.close();
  rmSync(dir, { recursive: true, force: true });
}
