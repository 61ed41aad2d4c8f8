/**
 * `npm run bench:pair -- --server-root <other checkout, built> [--db postgres|sqlite] [--scenario plain|idempotent] [--rounds 8] [--seconds 5] [--connections 16]`
 *
 * Two builds of esig side by side, on PostgreSQL (the default) or on SQLite: this checkout's server and
 * another's, each on a database of its own that its own CLI migrated (so an older checkout keeps its older
 * schema, which `bench:api --server-root` cannot do on PostgreSQL: it seeds and migrates with this checkout's
 * code). Both run at once, and take turns under the same load in short rounds, ordered ABBA so that a drift of
 * the machine's load over the run falls on both alike. For each round it reports requests per second and the
 * CPU per request of the server and of its PostgreSQL backends (from /proc). On a shared machine a single run
 * of either says little; the pairs, round by round, say what changed. (Alternated whole runs of `bench:api` were not enough:
 * on one day, whichever build ran first in a pair of runs used 10–30 % more CPU per request, in both orders.)
 *
 * The documents a request uses are copied in SQL from one uploaded through the API, so that seeding costs
 * seconds however many rounds there are. Rate limits are raised out of the way, as in bench:api.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import Database from 'better-sqlite3';
import pg from 'pg';
import { makePdf } from '@esig/testkit/pdf';
import type { Figures } from './lib.js';
import { POSTGRES_URL_OPTION, adjacentPairs, backendsOf, cpuMsOf, describeBuilds, describePairs, measure, startProcess, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    'server-root': { type: 'string' },
    scenario: { type: 'string', default: 'idempotent' },
    rounds: { type: 'string', default: '8' },
    seconds: { type: 'string', default: '5' },
    connections: { type: 'string', default: '16' },
    db: { type: 'string', default: 'postgres' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
if (values['server-root'] === undefined) {
  console.error('--server-root <another checkout of esig, built> is required: the build to compare this one with');
  process.exit(2);
}
if (values.scenario !== 'plain' && values.scenario !== 'idempotent') {
  console.error('--scenario is plain or idempotent');
  process.exit(2);
}
if (values.db !== 'postgres' && values.db !== 'sqlite') {
  console.error('--db is postgres or sqlite');
  process.exit(2);
}
const onSqlite = values.db === 'sqlite';
const idempotent = values.scenario === 'idempotent';
const rounds = Number(values.rounds);
const seconds = Number(values.seconds);
const connections = Number(values.connections);
const here = resolve(import.meta.dirname, '..');
const roots = { this: here, other: resolve(values['server-root']) };
// Said first, so that a run comparing what it should not (an edited dist/, a build not rebuilt) can be stopped.
const builds = describeBuilds(roots);
process.stdout.write(builds);

interface Side {
  readonly label: keyof typeof roots;
  readonly url: string;
  readonly pid: number;
  readonly dbUrl: string;
  readonly key: string;
  readonly docs: string[];
  next: number;
  readonly stop: () => Promise<void>;
  readonly drop: () => Promise<void>;
}

/** A SQLite file in a folder of its own, removed with the folder. */
const throwawaySqlite = (): { url: string; drop: () => Promise<void> } => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-bench-pair-'));
  return { url: `sqlite:${join(dir, 'esig.db')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
};

/** Copies of the uploaded document's row under new ids (Crockford base32, as the API's ids): a create-request reads only the row. */
const copyPostgresDocument = async (url: string, seed: string, docs: string[]) => {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(
      `INSERT INTO documents SELECT (json_populate_record(d, json_build_object('id', x.id))).* FROM documents d, unnest($2::text[]) AS x(id) WHERE d.id = $1`,
      [seed, docs],
    );
    await c.query('ANALYZE');
  } finally {
    await c.end();
  }
};
const copySqliteDocument = async (url: string, seed: string, docs: string[]) => {
  // While the server runs: its connections wait for this write (busy timeout), as for any other process's.
  const db = new Database(url.slice('sqlite:'.length), { timeout: 5_000 });
  try {
    const columns = (db.prepare('SELECT name FROM pragma_table_info(?)').all('documents') as Array<{ name: string }>).map((c) => c.name);
    const copy = db.prepare(`INSERT INTO documents (${columns.join(', ')}) SELECT ${columns.map((c) => (c === 'id' ? '?' : c)).join(', ')} FROM documents WHERE id = ?`);
    db.transaction(() => {
      for (const id of docs) copy.run(id, seed);
    })();
    db.exec('ANALYZE');
  } finally {
    db.close();
  }
};

/** A checkout's server on a database its own CLI migrated, with a key and `count` documents of its own. */
const startSide = async (label: keyof typeof roots, count: number): Promise<Side> => {
  const root = roots[label];
  const db = onSqlite ? throwawaySqlite() : await throwawayPostgres(values['postgres-url']!);
  const env = {
    ...process.env,
    ESIG_DATABASE_URL: db.url,
    ESIG_MASTER_KEY: randomBytes(32).toString('hex'),
    ESIG_PORT: '0',
    ESIG_HOST: '127.0.0.1',
    ESIG_WORKERS: 'none',
    ESIG_RATE_LIMIT_KEY: '100000000',
    ESIG_RATE_LIMIT_ORG: '100000000',
  };
  const cli = join(root, 'examples/server/bin/esig.mjs');
  execFileSync(process.execPath, [cli, 'migrate'], { env, stdio: 'ignore' });
  const issued = JSON.parse(execFileSync(process.execPath, [cli, 'keys', 'create', '--org', 'bench', '--mode', 'test', '--scopes', '*'], { env, stdio: ['ignore', 'pipe', 'ignore'] }).toString()) as { secret: string };
  const server = await startProcess([cli, 'serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/);
  const url = `http://127.0.0.1:${server.match[1]}`;
  const up = await fetch(`${url}/api/v1/documents?name=seed.pdf`, {
    method: 'POST',
    headers: { authorization: `Bearer ${issued.secret}`, 'content-type': 'application/pdf' },
    body: await makePdf(1),
  });
  if (up.status !== 201) throw new Error(`${label}: the seed upload answered ${up.status}`);
  const seed = ((await up.json()) as { id: string }).id;
  const docs = Array.from({ length: count }, (_, i) => `doc_01SEED${String(i).padStart(20, '0')}`);
  await (onSqlite ? copySqliteDocument : copyPostgresDocument)(db.url, seed, docs);
  return { label, url, pid: server.child.pid!, dbUrl: db.url, key: issued.secret, docs, next: 0, stop: server.stop, drop: db.drop };
};

interface Round {
  readonly side: keyof typeof roots;
  readonly f: Figures;
  readonly serverMs: number;
  readonly backendsMs: number;
}

const round = async (s: Side): Promise<Round> => {
  const backends = onSqlite ? [] : await backendsOf(s.dbUrl);
  const before = cpuMsOf([s.pid, ...backends]);
  const runId = randomBytes(4).toString('hex');
  const f = await measure(s.label, {
    url: s.url,
    connections,
    duration: seconds,
    requests: [
      {
        method: 'POST',
        path: '/api/v1/signature-requests',
        setupRequest: (req: any) => {
          const i = s.next++;
          const doc = s.docs[i % s.docs.length]!;
          return {
            ...req,
            headers: {
              authorization: `Bearer ${s.key}`,
              'content-type': 'application/json',
              ...(idempotent ? { 'idempotency-key': `pair-${runId}-${i}` } : {}),
            },
            body: JSON.stringify({ title: `Pair ${i}`, documentIds: [doc] }),
          };
        },
      },
    ],
  });
  // Backends that came and went during the round (the pool grows) are counted from zero.
  const after = cpuMsOf([s.pid, ...(onSqlite ? [] : await backendsOf(s.dbUrl)), ...before.keys()]);
  const used = (pid: number) => (after.get(pid) ?? before.get(pid) ?? 0) - (before.get(pid) ?? 0);
  const backendsMs = [...after.keys()].filter((pid) => pid !== s.pid).reduce((n, pid) => n + used(pid), 0);
  return { side: s.label, f, serverMs: used(s.pid), backendsMs };
};

// Enough documents that no request finds its document taken: a generous 3,000 req/s on PostgreSQL, 6,000 on
// SQLite, for each side's rounds and its warm-up (every round runs both sides).
const perSide = Math.ceil((onSqlite ? 6000 : 3000) * seconds * (rounds + 1)) + 1000;
const sides = { this: await startSide('this', perSide), other: await startSide('other', perSide) };
try {
  // Warm-up: each server's request path optimized, each pool's connections open.
  for (const s of Object.values(sides)) await round(s);
  const results: Round[] = [];
  const order: Array<keyof typeof roots> = [];
  const ab: Array<keyof typeof roots> = ['this', 'other'];
  for (let r = 0; r < rounds; r++) order.push(...(r % 2 === 0 ? ab : [...ab].reverse()));
  for (const side of order) {
    const r = await round(sides[side]);
    results.push(r);
    const n = r.f.requests;
    process.stdout.write(
      `${side.padEnd(5)} ${r.f.rps.toFixed(0).padStart(6)} req/s  p50 ${String(r.f.p50).padStart(3)} ms  CPU per request ${((r.serverMs + r.backendsMs) / n).toFixed(2)} ms` +
        ` (server ${(r.serverMs / n).toFixed(2)}, backends ${(r.backendsMs / n).toFixed(2)})${r.f.non2xx === 0 ? '' : `  ${r.f.non2xx} not 2xx`}\n`,
    );
  }
  const summary = (side: keyof typeof roots) => {
    const mine = results.filter((r) => r.side === side);
    const requests = mine.reduce((n, r) => n + r.f.requests, 0);
    const server = mine.reduce((n, r) => n + r.serverMs, 0) / requests;
    const backends = mine.reduce((n, r) => n + r.backendsMs, 0) / requests;
    const rps = mine.reduce((n, r) => n + r.f.rps, 0) / mine.length;
    return `${side.padEnd(5)} (${roots[side]}): mean ${rps.toFixed(0)} req/s, CPU per request ${(server + backends).toFixed(2)} ms (server ${server.toFixed(2)}, backends ${backends.toFixed(2)})`;
  };
  // Adjacent rounds compared, CPU per request (server and backends): how often this build used less, and whether
  // that count says more than the noise.
  const perRequest = (r: Round) => (r.serverMs + r.backendsMs) / Math.max(1, r.f.requests);
  const pairs = adjacentPairs(results, (r) => r.side === 'this', perRequest);
  process.stdout.write(
    `\n${values.scenario} create-request on ${onSqlite ? 'SQLite' : 'PostgreSQL'}, ${rounds} rounds of ${seconds} s each, ${connections} connections:\n${summary('this')}\n${summary('other')}\n` +
      describePairs('CPU per request', pairs) +
      builds,
  );
  // What the idempotency records left behind: a record inserted and then updated leaves a dead row version
  // (until vacuum) and grows the table; one inserted once, completed, does not.
  for (const s of onSqlite ? [] : Object.values(sides)) {
    const c = new pg.Client({ connectionString: s.dbUrl });
    await c.connect();
    try {
      const r = await c.query<{ live: string; dead: string; bytes: string }>(
        "SELECT n_live_tup AS live, n_dead_tup AS dead, pg_total_relation_size('idempotency_keys') AS bytes FROM pg_stat_user_tables WHERE relname = 'idempotency_keys'",
      );
      const x = r.rows[0]!;
      process.stdout.write(`${s.label.padEnd(5)} idempotency_keys: ${x.live} live rows, ${x.dead} dead, ${(Number(x.bytes) / 1024 / 1024).toFixed(1)} MiB with its indexes\n`);
    } finally {
      await c.end();
    }
  }
} finally {
  for (const s of Object.values(sides)) {
    await s.stop();
    await s.drop();
  }
}
