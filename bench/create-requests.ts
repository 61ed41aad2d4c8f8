/**
 * What bench:api and bench:instructions send and seed: create-requests over documents seeded straight through
 * the core, and the bare Express baseline's body.
 */
import * as E from 'fp-ts/lib/Either.js';
import type { Principal } from '@esig/core';
import { DEFAULT_PAGE_LIMITS, execute, inspectUpload, uploadDocument } from '@esig/core';
import { pdfLibInspector } from '@esig/pdf-pdflib';
import { createUlidGenerator, nodeCrypto, systemClock } from '@esig/runtime-node';
import type { loadConfig } from '@esig/server';
import { openDatabase } from '@esig/server';
import { makePdf } from '@esig/testkit/pdf';
import type { RequestSpec } from './lib.js';

/**
 * Every request needs its own uploaded document (a document joins at most one request), so seed plenty,
 * straight through the core on a connection of the bench's own (seeding is not what is measured).
 */
export const seedDocuments = async (config: ReturnType<typeof loadConfig>, principal: Principal, n: number): Promise<string[]> => {
  const db = await openDatabase(config, false);
  const deps = { stores: db.stores, uow: db.uow, clock: systemClock, ids: createUlidGenerator(systemClock), crypto: nodeCrypto, pdf: pdfLibInspector, pageLimits: DEFAULT_PAGE_LIMITS };
  const inspected = await inspectUpload(deps)(principal, await makePdf(1))();
  if (E.isLeft(inspected)) throw new Error('seed PDF refused');
  const ids: string[] = [];
  const started = Date.now();
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
    // A bulk load, as an operator would follow one: refresh the planner's statistics. Left to itself,
    // autovacuum does this within a minute or so; until then PostgreSQL plans for an empty table and
    // would scan the org's every document to find one (a freshly seeded table measures that minute).
    if (config.database.kind === 'postgres') {
      const pg = (await import('pg')).default;
      const c = new pg.Client({ connectionString: config.database.url });
      await c.connect();
      await c.query('ANALYZE');
      await c.end();
    }
  } finally {
    await db.close();
  }
  process.stderr.write(`  seeded ${n} documents in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  return ids;
};

/**
 * autocannon's requests of one run, request i on from `first` (a warm-up and the run after it go on through the
 * same documents).
 */
export const requestsFrom = (spec: (i: number) => RequestSpec, first = 0) => {
  let next = first;
  return [{ method: 'POST' as const, path: spec(first).path, setupRequest: (req: any) => ({ ...req, ...spec(next++) }) }];
};

let runs = 0;
/** Request i of a run: a create-request over its own document, with an Idempotency-Key unique to the run. */
export const createRequestSpecs = (key: string, docs: readonly string[], idempotent: boolean): ((i: number) => RequestSpec) => {
  // Keys unique to this run: a key reused with another body is (rightly) refused.
  const run = ++runs;
  return (i) => ({
    method: 'POST',
    path: '/api/v1/signature-requests',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(idempotent ? { 'idempotency-key': `bench-${run}-${i}` } : {}) },
    body: JSON.stringify({ title: `Bench ${i}`, documentIds: [docs[i % docs.length]] }),
  });
};

/**
 * The environment of an `esig serve` under a bench: its database, on a port of its own on loopback, with rate
 * limits out of the way, and (unless `extra` says otherwise) without workers, as each API process of a scale-out
 * deployment runs.
 */
export const benchServerEnv = (databaseUrl: string, masterKey: string, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  ESIG_DATABASE_URL: databaseUrl,
  ESIG_MASTER_KEY: masterKey,
  ESIG_PORT: '0',
  ESIG_HOST: '127.0.0.1',
  ESIG_RATE_LIMIT_KEY: '100000000',
  ESIG_RATE_LIMIT_ORG: '100000000',
  ESIG_WORKERS: 'none',
  ...extra,
});

/** The one API key the direct baseline (bench/direct-server.ts) accepts. */
export const DIRECT_KEY = 'direct-bench-key';

/** The bare Express baseline's request body (bench/bare-server.ts answers it at `POST /bare`). */
export const BARE_BODY = JSON.stringify({ title: 'Bench', documentIds: ['doc_x'] });
