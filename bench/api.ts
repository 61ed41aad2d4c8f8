/**
 * `npm run bench:api [-- --duration 10 --connections 16 --profile]`
 *
 * Create-request throughput and latency through the real server (`esig serve`, its own process, on a SQLite
 * file), beside a bare Express handler (also its own process) that parses the same JSON and answers 201,
 * measured in the same run on the same machine. The gap between the two is what esig itself costs: auth,
 * rate limiting, validation, the transaction, the outbox, the idempotency record.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/Either';
import type { ApiKey, Principal } from '@esig/core';
import { execute, inspectUpload, uploadDocument } from '@esig/core';
import { pdfLibInspector } from '@esig/pdf-pdflib';
import { createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import { openSqliteStore } from '@esig/store-sqlite';
import { makePdf } from '@esig/testkit/pdf';
import type { Figures } from './lib';
import { measure, printTable, startProcess } from './lib';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    db: { type: 'string', default: 'sqlite' },
    profile: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
if (values.db !== 'sqlite') {
  console.error(`--db ${values.db}: this build benchmarks the SQLite store only.`);
  process.exit(2);
}

const root = new URL('..', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-'));
const dbPath = join(dir, 'esig.db');
const env = {
  ...process.env,
  ESIG_DATABASE_URL: `sqlite:${dbPath}`,
  ESIG_PORT: '0',
  ESIG_HOST: '127.0.0.1',
  ESIG_LOG_LEVEL: 'warn',
  ESIG_RATE_LIMIT_KEY: '100000000',
  ESIG_RATE_LIMIT_ORG: '100000000',
};

/**
 * Every request needs its own uploaded document (a document joins at most one request), so seed plenty,
 * straight through the core on a second connection to the same file (seeding is not what is measured).
 */
const seedDocuments = async (principal: Principal, n: number): Promise<string[]> => {
  const db = openSqliteStore({ path: dbPath });
  const deps = { ...db, clock: systemClock, ids: createUlidGenerator(systemClock), crypto: nodeCrypto, pdf: pdfLibInspector };
  const inspected = await inspectUpload(deps)(principal, await makePdf(1))();
  if (E.isLeft(inspected)) throw new Error('seed PDF refused');
  const ids: string[] = [];
  try {
    for (let done = 0; done < n; done += 2000) {
      const r = await execute(deps)((tx) => async () => {
        for (let i = done; i < Math.min(n, done + 2000); i++) {
          const d = await uploadDocument(deps)(principal, { name: `seed-${i}.pdf`, pdf: inspected.right })(tx)();
          if (E.isLeft(d)) return d;
          ids.push(d.right.id);
        }
        return E.right(undefined);
      })();
      if (E.isLeft(r)) throw new Error(`seeding failed: ${r.left._tag}`);
    }
  } finally {
    db.close();
  }
  return ids;
};

const createRequests = (url: string, key: string, docs: readonly string[], idempotent: boolean) => {
  let next = 0;
  return {
    url,
    connections,
    duration,
    amount: docs.length,
    requests: [
      {
        method: 'POST' as const,
        path: '/api/v1/signature-requests',
        setupRequest: (req: any) => {
          const i = next++;
          return {
            ...req,
            headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idempotent ? { 'idempotency-key': `bench-${i}` } : {}) },
            body: JSON.stringify({ title: `Bench ${i}`, documentIds: [docs[i % docs.length]] }),
          };
        },
      },
    ],
  };
};

const bare = await startProcess(['--import', 'tsx', join(root, 'bench/bare-server.ts')], process.env, /listening (\d+)/);
const esig = await startProcess(
  [...(values.profile ? ['--cpu-prof', `--cpu-prof-dir=${join(root, 'bench/profiles')}`] : []), join(root, 'examples/server/bin/esig.mjs'), 'serve'],
  env,
  /esig: listening on http:\/\/[^:]+:(\d+)/,
);
try {
  const key = /(esig_test_[A-Za-z0-9]{32})/.exec(esig.output())![1]!;
  const url = `http://127.0.0.1:${esig.match[1]}`;
  const record = await keyRecordOf(dbPath, key);
  const principal: Principal = { tenant: { orgId: record.orgId, mode: record.mode }, keyId: record.id, scopes: record.scopes };

  process.stdout.write(`esig bench:api — ${connections} connections, ${duration} s per scenario, server and baseline in their own processes, SQLite at ${dir}\n`);
  const figures: Figures[] = [];
  figures.push(
    await measure('bare Express handler (baseline)', {
      url: `http://127.0.0.1:${bare.match[1]}/bare`, connections, duration, method: 'POST',
      headers: { 'content-type': 'application/json' }, body: JSON.stringify({ title: 'Bench', documentIds: ['doc_x'] }),
    }),
  );
  const capacity = Math.min(Math.ceil(figures[0]!.rps * duration * 1.1), 80_000);
  // A short warm-up so the esig process is JIT-warm, as the baseline is after its first second.
  await measure('warm-up', { ...createRequests(url, key, await seedDocuments(principal, 2000), false), duration: 2 });
  figures.push(await measure('esig POST /signature-requests', createRequests(url, key, await seedDocuments(principal, capacity), false)));
  figures.push(await measure('esig POST /signature-requests + Idempotency-Key', createRequests(url, key, await seedDocuments(principal, capacity), true)));
  printTable(figures);
  const base = figures[0]!;
  for (const f of figures.slice(1)) process.stdout.write(`${f.name}: ${((f.rps / base.rps) * 100).toFixed(1)} % of the baseline's throughput\n`);
} finally {
  await esig.stop();
  await bare.stop();
  rmSync(dir, { recursive: true, force: true });
}

async function keyRecordOf(path: string, key: string): Promise<ApiKey> {
  const db = openSqliteStore({ path });
  try {
    const k = await db.stores.apiKeys.findBySecretHash(nodeCrypto.sha256Hex(key))();
    if (E.isLeft(k) || k.right === null) throw new Error('bench key not found');
    return k.right;
  } finally {
    db.close();
  }
}
