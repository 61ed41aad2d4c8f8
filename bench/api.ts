/**
 * `npm run bench:api [-- --duration 10 --connections 16 --db sqlite|postgres --profile --scenarios plain,idempotent --workers none|in-process --allocations all|promoted --stalls]`
 *
 * Create-request throughput and latency through the real server (`esig serve`, its own process, on a SQLite
 * file), beside a bare Express handler (also its own process) that parses the same JSON and answers 201,
 * measured in the same run on the same machine, each esig scenario right after a baseline run of its own. The gap between the two is what esig itself costs: auth,
 * rate limiting, validation, the transaction, the outbox, the idempotency record. The server runs with
 * ESIG_WORKERS=none (an API process; workers run elsewhere). `--db postgres` adds the
 * same scenarios on a throwaway PostgreSQL database (beside the SQLite ones, in the same run). Each esig
 * scenario is then run again at a fixed rate of half its measured peak, for p50/p99 at a load a service is
 * sized for, beside the baseline at the same rate.
 *
 * A second baseline, `direct`, runs on each store before esig's scenarios: a create-request written straight
 * against the database driver (bench/direct-server.ts), the key found and its call counted, the document taken
 * and the request inserted, in as few statements as the database allows and with none of esig's code; for the
 * idempotent scenario, the same with the Idempotency-Key's record written beside the request. Bare
 * Express is what the ratios are against; the direct baseline shows how much of the gap the database
 * alone takes, so what is left is esig's own.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { constants } from 'node:perf_hooks';
import { randomBytes } from 'node:crypto';
import type autocannon from 'autocannon';
import type { Principal } from '@esig/core';
import { createKeyStandalone, loadConfig } from '@esig/server';
import { BARE_BODY, DIRECT_KEY, benchServerEnv, createRequestSpecs, requestsFrom, seedDocuments } from './create-requests.js';
import type { Figures } from './lib.js';
import { backendsOf, cpuMsOf, measure, measureAtRate, POSTGRES_URL_OPTION, printTable, startProcess, successRate, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    duration: { type: 'string', default: '10' },
    connections: { type: 'string', default: '16' },
    db: { type: 'string', default: 'sqlite' },
    profile: { type: 'boolean', default: false },
    // Which create-request scenarios to run: `plain`, `idempotent` (with an Idempotency-Key), or both. One
    // alone makes a profile (--profile) of that path only.
    scenarios: { type: 'string', default: 'plain,idempotent' },
    // The server's ESIG_WORKERS: `none` (an API process, as in a scale-out deployment) or `in-process`
    // (the default configuration of `npm start`: the workers run beside the API in the same process).
    workers: { type: 'string', default: 'none' },
    // The server's ESIG_LOG_LEVEL; unset, the server's default (info: a line per request on stdout).
    'log-level': { type: 'string' },
    // Another checkout of esig (built) whose server to measure, e.g. the commit before a change, to compare
    // two versions under the same conditions by running the bench once with and once without it. The bench
    // seeds and migrates with its own code, so a checkout of an older schema refuses the database: run the
    // bench from that checkout instead.
    'server-root': { type: 'string' },
    'postgres-url': POSTGRES_URL_OPTION,
    // `all` or `promoted`: V8's sampling heap profiler in each esig server (bench/allocation-sampler.mjs), and
    // the bytes per request answered over the server's life (warm-up included): all it allocated, or what
    // reached the old generation; the samples by call stack go to bench/profiles/ (`.heapprofile`, for Chrome
    // DevTools' Memory tab). Slows the server: not for throughput figures.
    allocations: { type: 'string' },
    // Event-loop stalls and GC pauses of each esig server during its half-load runs (bench/loop-stalls.mjs).
    stalls: { type: 'boolean', default: false },
  },
});
const duration = Number(values.duration);
const wanted = values.scenarios!.split(',').map((x) => x.trim());
if (values.workers !== 'none' && values.workers !== 'in-process') {
  console.error('--workers is none or in-process');
  process.exit(2);
}
if (values.allocations !== undefined && values.stalls) {
  // Each preload stops its server on SIGTERM in its own way; one at a time.
  console.error('--allocations and --stalls do not go together');
  process.exit(2);
}
if (values.allocations !== undefined && values.allocations !== 'all' && values.allocations !== 'promoted') {
  console.error('--allocations is all or promoted');
  process.exit(2);
}
if (wanted.length === 0 || wanted.some((x) => x !== 'plain' && x !== 'idempotent')) {
  console.error('--scenarios is a comma-separated list of plain and idempotent');
  process.exit(2);
}
const connections = Number(values.connections);
if (values.db !== 'sqlite' && values.db !== 'postgres') {
  console.error('--db is sqlite or postgres (postgres also runs sqlite, for comparison)');
  process.exit(2);
}

const root = new URL('..', import.meta.url).pathname;
/** Where `--profile` and `--allocations` write what they record. */
const profiles = join(root, 'bench/profiles');
const serverRoot = values['server-root'] ?? root;
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-'));

/** The part of a process's CPU time (ms) spent in the kernel so far: its system calls, the network stack. */
const kernelMsOf = (pid: number): number => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[12]) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
};

/**
 * How many write system calls (write, writev, sendto, pwrite…) a process has made so far, from
 * /proc/<pid>/io (Linux; elsewhere NaN). On a virtual machine each one that wakes another process is costly.
 */
const writeCallsOf = (pid: number): number => {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
  } catch {
    return Number.NaN;
  }
};

/**
 * Runs `run` and measures what it cost: the CPU time of the server (and the part of it in the kernel) and of the
 * PostgreSQL backends of `pgUrl` (nothing on SQLite), and the server's write calls, each per request answered;
 * adds the line to `cpu`.
 */
const costOf = async (serverPid: number, pgUrl: string | null, run: () => Promise<Figures>): Promise<Figures> => {
  const before = cpuMsOf([serverPid, ...(await backendsOf(pgUrl))]);
  const writesBefore = writeCallsOf(serverPid);
  const kernelBefore = kernelMsOf(serverPid);
  const clientBefore = process.cpuUsage();
  const f = await run();
  // This process sends the load (autocannon runs in it), and nothing else runs in it meanwhile.
  const client = process.cpuUsage(clientBefore);
  const writes = writeCallsOf(serverPid) - writesBefore;
  const kernel = kernelMsOf(serverPid) - kernelBefore;
  const after = cpuMsOf([serverPid, ...(await backendsOf(pgUrl)), ...before.keys()]);
  const used = (pid: number) => (after.get(pid) ?? before.get(pid) ?? 0) - (before.get(pid) ?? 0);
  const server = used(serverPid);
  const database = [...after.keys()].filter((pid) => pid !== serverPid).reduce((n, pid) => n + used(pid), 0);
  costs.set(f.name, { server: server / f.requests, served: (server + database) / f.requests, client: (client.user + client.system) / 1000 / f.requests });
  cpu.push(
    `${f.name}: CPU per request ${((server + database) / f.requests).toFixed(2)} ms (server ${(server / f.requests).toFixed(2)} ms, ${(kernel / f.requests).toFixed(2)} of it in the kernel` +
      (pgUrl === null ? ')' : `, PostgreSQL backends ${(database / f.requests).toFixed(2)} ms)`) +
      `; the server's write calls per request ${(writes / f.requests).toFixed(1)}` +
      (f.non2xx === 0 ? '' : `, over ${f.requests} answers of which ${f.non2xx} were not 2xx`),
  );
  return f;
};

/** CPU per request (ms) of a run measured by `costOf`: the server's, with its backends (`served`), and the load generator's. */
const costs = new Map<string, { readonly server: number; readonly served: number; readonly client: number }>();

/**
 * The goals, each a share of the bare Express rate measured just before the scenario, read as CPU per
 * request. A server process answers on one thread (its event loop), so a rate R needs each request to take at
 * most 1/R of the server's CPU, as it does for bare Express (whose rate is that limit); and all of the
 * processes share the cores, so it also needs each request to take at most `cores / R` in all: server,
 * database backends and the load generator (measured in the esig run). Both are printed beside what esig and
 * the direct baseline used. (The server's CPU counts its other threads too, GC helpers and libuv, so the
 * first bound is a little strict.)
 */
const GOALS: Readonly<Record<'SQLite' | 'PostgreSQL', { readonly plain: number; readonly idempotent: number }>> = {
  SQLite: { plain: 0.5, idempotent: 0.5 },
  PostgreSQL: { plain: 0.3, idempotent: 0.25 },
};
/** Each esig scenario's goal and the name of its store's direct baseline, by the scenario's name, noted when it runs. */
const goals = new Map<string, { readonly share: number; readonly direct: string }>();
const directName = (label: string, idempotent: boolean) => `direct: driver only, no esig${idempotent ? ' + Idempotency-Key' : ''} (${label})`;
const CORES = availableParallelism();
const budgetLine = (f: Figures, base: Figures): string | null => {
  const goal = goals.get(f.name);
  const cost = costs.get(f.name);
  if (goal === undefined || cost === undefined) return null;
  const rate = goal.share * base.rps;
  const onThread = 1000 / rate;
  const all = (CORES * 1000) / rate;
  const d = costs.get(goal.direct);
  const used = (c: { server: number; served: number }) =>
    c.server === c.served ? `${c.server.toFixed(2)} ms` : `${c.server.toFixed(2)} ms in the server, ${c.served.toFixed(2)} with its backends`;
  return (
    `  goal ${(goal.share * 100).toFixed(0)} % (${rate.toFixed(0)} req/s): at most ${onThread.toFixed(2)} ms of the server's CPU per request (one event loop), ` +
    `and ${(all - cost.client).toFixed(2)} ms with its database (${CORES} cores, less the load generator's ${cost.client.toFixed(2)} ms); ` +
    `esig used ${used(cost)}` +
    (d === undefined ? '' : `; the direct baseline ${used(d)}`)
  );
};

const createRequests = (url: string, key: string, docs: readonly string[], idempotent: boolean) => ({
  url,
  connections,
  // Duration only: autocannon's `amount` would override it and run until every seeded document is used.
  duration,
  requests: requestsFrom(createRequestSpecs(key, docs, idempotent)),
});

/**
 * Requests sent before a server is measured: a count, not a time, so that a slower server is as warm as a faster
 * one. Two seconds were 800 requests on PostgreSQL, when V8 was still optimizing the request path: a profile
 * put 9 % of the measured run in the optimizing compiler, and the server's CPU per request fell by a quarter
 * after a longer warm-up.
 */
const WARM_UP_REQUESTS = 5_000;
// autocannon's `amount` overrides any duration.
const warmUp = (opts: autocannon.Options): autocannon.Options => ({ ...opts, amount: WARM_UP_REQUESTS });

interface Direct {
  readonly label: string;
  readonly idempotent: boolean;
  readonly base: Figures;
  readonly direct: Figures;
}
const directs: Direct[] = [];

/**
 * The direct baseline on one store, each wanted scenario (plain, then with an Idempotency-Key) right after a bare
 * Express run of its own: its own process and its own database (a file beside esig's, or a throwaway PostgreSQL
 * database), seeded with a document per request.
 */
const measureDirect = async (label: string, database: string, capacity: number): Promise<void> => {
  const kinds = [false, true].filter((i) => wanted.includes(i ? 'idempotent' : 'plain'));
  // The warm-up takes documents too; each scenario has its own.
  const documents = WARM_UP_REQUESTS + capacity * kinds.length;
  const direct = await startProcess(
    ['--import', 'tsx', join(root, 'bench/direct-server.ts')],
    { ...process.env, ESIG_DIRECT_DATABASE: database, ESIG_DIRECT_DOCUMENTS: String(documents), ESIG_DIRECT_KEY: DIRECT_KEY },
    /listening (\d+)/,
  );
  try {
    const url = `http://127.0.0.1:${direct.match[1]}`;
    const pgUrl = database.startsWith('postgres') ? database : null;
    const docs = Array.from({ length: documents }, (_, i) => `doc_${i + 1}`);
    await measure('warm-up', warmUp(createRequests(url, DIRECT_KEY, docs.slice(0, WARM_UP_REQUESTS), kinds[0]!)));
    for (const [n, idempotent] of kinds.entries()) {
      const base = await measureBare(`  baseline, just before`);
      const from = WARM_UP_REQUESTS + n * capacity;
      const f = await costOf(direct.child.pid!, pgUrl, () =>
        measure(directName(label, idempotent), createRequests(url, DIRECT_KEY, docs.slice(from, from + capacity), idempotent)),
      );
      directs.push({ label, idempotent, base, direct: f });
    }
  } finally {
    await direct.stop();
  }
};

/** One store's scenarios: `esig serve` on it, warmed up, then create-request with and without a key. */
const scenarios = async (label: keyof typeof GOALS, databaseUrl: string, capacity: number): Promise<Figures[]> => {
  const env = benchServerEnv(databaseUrl, masterKey, {
    // The server's default unless asked otherwise: at `info` it writes a log line per request, which a
    // deployment pays for, so the bench does too.
    ...(values['log-level'] === undefined ? {} : { ESIG_LOG_LEVEL: values['log-level'] }),
    // By default the API process alone, as each API process of a scale-out deployment runs; with
    // `--workers in-process`, the default configuration, whose workers also dispatch the seeded documents'
    // events while the API is being measured.
    ESIG_WORKERS: values.workers,
  });
  const config = loadConfig(env);
  const issued = await createKeyStandalone(config, { orgName: 'bench', mode: 'test', scopes: ['*'], name: 'bench' });
  const principal: Principal = { tenant: { orgId: issued.org.id, mode: 'test' }, scopes: ['*'], credential: { kind: 'api_key', keyId: issued.key.id } };
  const allocationsOut = join(dir, `allocations-${label}.json`);
  const allocationsProfile = join(profiles, `allocations-${label.toLowerCase()}-${values.allocations}-${process.pid}.heapprofile`);
  if (values.allocations !== undefined) mkdirSync(profiles, { recursive: true });
  const stallsOut = join(dir, `stalls-${label}.json`);
  // When each half-load run of this server began and ended, wall-clock, to pick its stalls out of the server's life.
  const halfWindows: { name: string; from: number; to: number }[] = [];
  // Requests this server answered, for the allocations per request.
  let answered = WARM_UP_REQUESTS;
  const esig = await startProcess(
    [
      ...(values.profile ? ['--cpu-prof', `--cpu-prof-dir=${profiles}`] : []),
      ...(values.allocations === undefined ? [] : ['--import', join(root, 'bench/allocation-sampler.mjs')]),
      ...(values.stalls ? ['--import', join(root, 'bench/loop-stalls.mjs')] : []),
      join(serverRoot, 'examples/server/bin/esig.mjs'),
      'serve',
    ],
    values.allocations !== undefined
      ? { ...env, ESIG_BENCH_ALLOCATIONS: values.allocations, ESIG_BENCH_ALLOCATIONS_OUT: allocationsOut, ESIG_BENCH_ALLOCATIONS_PROFILE: allocationsProfile }
      : values.stalls
        ? { ...env, ESIG_BENCH_STALLS_OUT: stallsOut }
        : env,
    /esig: listening on http:\/\/[^:]+:(\d+)/,
  );
  try {
    const url = `http://127.0.0.1:${esig.match[1]}`;
    process.stderr.write(`  ${label}: server up, seeding and measuring…\n`);
    await measure('warm-up', warmUp(createRequests(url, issued.secret, await seedDocuments(config, principal, WARM_UP_REQUESTS), false)));
    // Each scenario right after a baseline run of its own: on a shared machine the load of other work changes
    // from minute to minute, and a ratio is only meaningful between two figures taken under the same load.
    const paired: Figures[] = [];
    for (const idempotent of [false, true].filter((i) => wanted.includes(i ? 'idempotent' : 'plain'))) {
      // The half-load run's documents are seeded now too, before the peak run: seeded just before it (in bulk, from
      // this process, then analyzed) they left the server stretches of slow answers in its first second, on
      // PostgreSQL 33–62 requests over 15 ms, up to 33–64 ms (docs/performance.md, twenty-second round). The run
      // needs a fifth more than half of esig's peak rate times `duration`: 0.6 of `capacity` while esig's peak stays
      // under twice the bare rate that sized it (and more are seeded below if it did not).
      const seeded = await seedDocuments(config, principal, capacity + Math.ceil(capacity * 0.6));
      const docs = seeded.slice(0, capacity);
      const base = await measureBare(`  baseline, just before`);
      const pgUrl = config.database.kind === 'postgres' ? config.database.url : null;
      const f = await costOf(esig.child.pid!, pgUrl, () =>
        measure(`esig POST /signature-requests${idempotent ? ' + Idempotency-Key' : ''} (${label})`, createRequests(url, issued.secret, docs, idempotent)),
      );
      paired.push(base, f);
      goals.set(f.name, { share: GOALS[label][idempotent ? 'idempotent' : 'plain'], direct: directName(label, idempotent) });
      // Latency at half of that peak, the load a service is sized for: a fixed arrival rate (not as fast as
      // the server answers), so queueing at saturation does not hide in the figures. The baseline is
      // measured at the same rate.
      const rate = Math.max(1, Math.round(successRate(f) / 2));
      const spare = seeded.slice(capacity);
      const wantedDocs = Math.ceil(rate * duration * 1.2);
      // Only if esig outran the bare run that sized `capacity` are more needed.
      const halfDocs = spare.length >= wantedDocs ? spare : [...spare, ...(await seedDocuments(config, principal, wantedDocs - spare.length))];
      const halfBase = await measureBareAtRate(`  baseline at the same rate`, rate);
      const from = Date.now();
      const half = await measureAtRate(`${f.name} at half load, ${rate} req/s`, { url, rate, duration, connections, request: createRequestSpecs(issued.secret, halfDocs, idempotent) });
      halfWindows.push({ name: f.name, from, to: Date.now() });
      halfLoad.push(half, halfBase);
      answered += f.requests + half.requests;
    }
    return paired;
  } finally {
    await esig.stop();
    if (values.allocations !== undefined) {
      const { bytes } = JSON.parse(readFileSync(allocationsOut, 'utf8')) as { bytes: number };
      allocationLines.push(
        `esig server (${label}, ${wanted.join(' + ')}): ${(bytes / answered / 1024).toFixed(1)} KB per request ${values.allocations === 'all' ? 'allocated' : 'promoted to the old generation'} (${(bytes / 1e6).toFixed(0)} MB over ${answered} requests, warm-up included); by call stack in ${relative(process.cwd(), allocationsProfile)}`,
      );
    }
    if (values.stalls) {
      const record = JSON.parse(readFileSync(stallsOut, 'utf8')) as LoopRecord;
      stallLines.push(...halfWindows.map((w) => describeStalls(w.name, record, w.from, w.to)));
    }
  }
};
const allocationLines: string[] = [];
const stallLines: string[] = [];

interface LoopRecord {
  readonly stalls: readonly { readonly at: number; readonly ms: number }[];
  readonly gcs: readonly { readonly at: number; readonly ms: number; readonly kind?: number }[];
}
/** One half-load run's stalls: how many, how long, and how many a GC pause fell in; and the GC pauses themselves. */
const describeStalls = (name: string, r: LoopRecord, from: number, to: number): string => {
  const within = <T extends { at: number }>(xs: readonly T[]) => xs.filter((x) => x.at >= from && x.at <= to);
  const stalls = within(r.stalls);
  const gcs = within(r.gcs);
  const long = stalls.filter((s) => s.ms >= 6);
  const withGc = long.filter((s) => r.gcs.some((g) => g.at < s.at + s.ms && g.at + g.ms > s.at)).length;
  const longest = stalls.reduce((m, s) => Math.max(m, s.ms), 0);
  const scavenges = gcs.filter((g) => g.kind === constants.NODE_PERFORMANCE_GC_MINOR);
  const majors = gcs.filter((g) => g.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
  const sum = (xs: readonly { ms: number }[]) => xs.reduce((n, x) => n + x.ms, 0);
  const seconds = (to - from) / 1000;
  return (
    `${name} at half load: ${long.length} event-loop stalls of 6 ms or more (${withGc} of them during a GC pause), longest ${longest.toFixed(1)} ms, over ${seconds.toFixed(1)} s; ` +
    `GC paused it ${sum(gcs).toFixed(0)} ms in all: ${scavenges.length} scavenges (mean ${(sum(scavenges) / Math.max(1, scavenges.length)).toFixed(1)} ms), ${majors.length} mark-compacts (longest ${majors.reduce((m, g) => Math.max(m, g.ms), 0).toFixed(1)} ms)`
  );
};

const masterKey = randomBytes(32).toString('hex');
const cpu: string[] = [];
const bare = await startProcess(['--import', 'tsx', join(root, 'bench/bare-server.ts')], process.env, /listening (\d+)/);
const measureBare = (name: string) =>
  measure(name, { url: `http://127.0.0.1:${bare.match[1]}/bare`, connections, duration, method: 'POST', headers: { 'content-type': 'application/json' }, body: BARE_BODY });
const measureBareAtRate = (name: string, rate: number) =>
  measureAtRate(name, {
    url: `http://127.0.0.1:${bare.match[1]}`, rate, duration, connections,
    request: () => ({ method: 'POST', path: '/bare', headers: { 'content-type': 'application/json' }, body: BARE_BODY }),
  });
const halfLoad: Figures[] = [];
let dropDatabase = async () => undefined as void;
try {
  process.stdout.write(`esig bench:api — ${connections} connections, ${duration} s per scenario; server and baseline each in their own process; workers ${values.workers}; server from ${serverRoot}\n`);
  const figures: Figures[] = [];
  const bareBefore = cpuMsOf([bare.child.pid!]).get(bare.child.pid!) ?? 0;
  figures.push(await measureBare('bare Express handler (baseline)'));
  const bareUsed = (cpuMsOf([bare.child.pid!]).get(bare.child.pid!) ?? 0) - bareBefore;
  cpu.push(`bare Express handler (baseline): CPU per request ${(bareUsed / figures[0]!.requests).toFixed(2)} ms`);
  // Enough documents for esig to run twice as fast as this first baseline run: a request whose document is
  // already taken answers 409 cheaply, and counted as served it would flatter esig (a cap of 3,000 req/s did
  // exactly that once the machine got faster). A fifth more was not enough once esig's create-request ran
  // faster than a bare Express run the machine had slowed (its documents ran out after 44,000 requests).
  const capacity = Math.ceil(figures[0]!.rps * duration * 2);
  await measureDirect('SQLite', `sqlite:${join(dir, 'direct.db')}`, capacity);
  figures.push(...(await scenarios('SQLite', `sqlite:${join(dir, 'esig.db')}`, capacity)));
  if (values.db === 'postgres') {
    const db = await throwawayPostgres(values['postgres-url']!);
    const directDb = await throwawayPostgres(values['postgres-url']!);
    dropDatabase = async () => {
      await db.drop();
      await directDb.drop();
    };
    await measureDirect('PostgreSQL', directDb.url, capacity);
    figures.push(...(await scenarios('PostgreSQL', db.url, capacity)));
  }
  printTable(figures);
  process.stdout.write('\nthe direct baseline (the database driver alone) on each store:');
  printTable(directs.flatMap((d) => [d.base, d.direct]));
  process.stdout.write('\nlatency at half of the peak measured above (a fixed arrival rate):');
  printTable(halfLoad);
  process.stdout.write('\n');
  // Each esig figure against the baseline measured just before it.
  for (let i = 2; i < figures.length; i += 2) {
    const base = figures[i - 1]!;
    const f = figures[i]!;
    // Only the requests that succeeded count: an error answered fast is not a request served.
    const served = successRate(f);
    const failed = f.non2xx === 0 ? '' : ` — ${f.non2xx} answers were not 2xx and are not counted`;
    process.stdout.write(`${f.name}: ${((served / base.rps) * 100).toFixed(1)} % of the baseline's throughput (${served.toFixed(0)} / ${base.rps.toFixed(0)} req/s)${failed}\n`);
    const budget = budgetLine(f, base);
    if (budget !== null) process.stdout.write(`${budget}\n`);
  }
  // How much of the gap the database alone takes: the direct baseline against bare Express, and esig's plain
  // create-request against the direct baseline. The two ran minutes apart, so the second compares their ratios
  // to the bare runs just before each, not their raw rates.
  for (const d of directs) {
    const directRatio = successRate(d.direct) / d.base.rps;
    process.stdout.write(`${d.direct.name}: ${(directRatio * 100).toFixed(1)} % of the baseline's throughput (${successRate(d.direct).toFixed(0)} / ${d.base.rps.toFixed(0)} req/s)\n`);
    const scenario = `esig POST /signature-requests${d.idempotent ? ' + Idempotency-Key' : ''} (${d.label})`;
    const at = figures.findIndex((f) => f.name === scenario);
    if (at > 0) {
      const esigRatio = successRate(figures[at]!) / figures[at - 1]!.rps;
      process.stdout.write(`  ${scenario} does ${((esigRatio / directRatio) * 100).toFixed(1)} % of what the direct baseline does, each against its own bare run\n`);
    }
  }
  for (const line of cpu) process.stdout.write(`${line}\n`);
  for (const line of allocationLines) process.stdout.write(`${line}\n`);
  for (const line of stallLines) process.stdout.write(`${line}\n`);
} finally {
  await bare.stop();
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
}
