/**
 * `npm run bench:webhooks [-- --events 2000 --warmup 5000 --workers 1 --db sqlite|postgres]`
 *
 * Sustained webhook deliveries per second from `esig worker` processes to a local HTTPS receiver, and the
 * time from an event's commit to its first delivery attempt (p50/p99), beside the rate of bare HTTPS POSTs
 * to the same receiver with a plain keep-alive client (`https.Agent`, connections reused; bench/bare-poster.ts, in a
 * process of its own) at the same concurrency as the workers' webhook job loops (workers × ESIG_WEBHOOK_CONCURRENCY),
 * measured in the same run.
 * A second baseline, `direct`, delivers as many events at the same concurrency with none of esig's code, recorded
 * straight on the database driver (bench/direct-deliverer.ts): how much of the bare rate a recorded delivery can
 * reach at all, and so how much of the gap is esig's.
 * `--concurrency` sets the webhook job loops per worker (default 16, the server's default); `--server-root <checkout>`
 * runs the workers of another (built) checkout, to compare two versions in the same conditions.
 */
import { readFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createUlidGenerator, systemClock } from '@esig/runtime-node';
import { loadConfig, openDatabase } from '@esig/server';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { POSTGRES_URL_OPTION, startProcess, throwawayPostgres } from './lib.js';
import { commitEvents, createBenchEndpoint, workerEnv } from './webhook-setup.js';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '2000' },
    // Deliveries made before the timed backlog, untimed (the workers' connections opened, their code compiled).
    // 5,000, as bench:webhooks-pair: after 1,000 a worker still spent a third more per delivery than later
    // (TurboFan compiling; `bench:instructions -- --target webhooks` counted its compiles at a tenth of the work
    // after 3,000), and a worker runs for hours. `--warmup 1000` gives the figure of the earlier rounds.
    warmup: { type: 'string', default: '5000' },
    workers: { type: 'string', default: '1' },
    concurrency: { type: 'string', default: '16' },
    db: { type: 'string', default: 'sqlite' },
    'server-root': { type: 'string' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const events = Number(values.events);
/** The issue's goal: deliveries at 70 % of the bare keep-alive POST rate. */
const GOAL = 0.7;
const CORES = availableParallelism();
const warmup = Number(values.warmup);
const workers = Number(values.workers);
const loops = Number(values.concurrency);
const root = new URL('..', import.meta.url).pathname;
const serverRoot = values['server-root'] ?? root;
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-wh-'));
const masterKey = randomBytes(32);

// ---- The database ----------------------------------------------------------------------------------
if (values.db !== 'sqlite' && values.db !== 'postgres') {
  console.error('--db is sqlite or postgres');
  process.exit(2);
}
/** A database of the kind `--db` names, for one part of the bench: a SQLite file in `dir`, or a throwaway PostgreSQL database. */
const databaseFor = async (file: string): Promise<{ url: string; drop: () => Promise<void> }> =>
  values.db === 'postgres' ? throwawayPostgres(values['postgres-url']!) : { url: `sqlite:${join(dir, file)}`, drop: async () => undefined };
const { url: databaseUrl, drop: dropDatabase } = await databaseFor('esig.db');

const rx = await startHttpsReceiver();
const env = {
  ...workerEnv({ databaseUrl, masterKey, certFile: rx.certFile, loops, sqlite: values.db === 'sqlite' }),
  // A `--server-root` from before ESIG_WEBHOOK_CONCURRENCY ran deliveries on its one worker's loops. (Not set
  // otherwise: the loops of the other jobs would find none and poll, adding work that is not a delivery's.)
  ...(values['server-root'] === undefined ? {} : { ESIG_WORKER_CONCURRENCY: String(loops) }),
};
const config = loadConfig(env);
const db = await openDatabase(config);
const ids = createUlidGenerator(systemClock);

/**
 * CPU time (user + system) a process has used so far, in ms, from /proc (Linux; NaN elsewhere): on a shared
 * machine the workers' CPU per delivery is steadier than their rate, which the other load moves.
 */
const cpuMs = (pid: number | undefined): number => {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return Number.NaN;
  }
};

try {
  // ---- Baseline: bare POSTs to the same receiver, a plain keep-alive client, as many at once as job loops --
  // In a process of its own (bench/bare-poster.ts), as the workers and the direct baseline are: from this process it
  // would share the receiver's one thread, and run slower than the client alone can.
  const n = Math.min(events, 10_000);
  const concurrent = workers * loops;
  // Warmed up first, untimed, with as many POSTs as esig's workers and the direct baseline make untimed (`--warmup`):
  // its TLS handshakes and first compilations are not what a keep-alive client costs, and a baseline warmed less than
  // what it is compared with flatters esig (docs/performance.md, webhooks' thirteenth round).
  // The line startProcess waits for is the client's result, printed once its timed POSTs are done (within startProcess's
  // 120 s); a POST that fails ends the client with an error, and the bench with its output.
  const bare = await startProcess(
    ['--import', 'tsx', join(root, 'bench/bare-poster.ts')],
    { ...process.env, ESIG_BARE_TARGET: `${rx.url}/bare`, ESIG_BARE_CA: rx.certFile, ESIG_BARE_WARMUP: String(warmup), ESIG_BARE_COUNT: String(n), ESIG_BARE_CONCURRENCY: String(concurrent) },
    /bare: ([\d.]+) ([\d.]+)/,
  );
  await bare.stop();
  const bareRate = Number(bare.match[1]);
  const bareCpu = Number(bare.match[2]);

  // ---- Second baseline: deliveries recorded straight on the driver, no esig (bench/direct-deliverer.ts) -------
  // Its own database of the same kind, its own process; timed as esig's workers are below: from its `warmup`-th
  // delivery to its last.
  const total = warmup + events;
  // BENCH_PROFILE_DIR=<dir>: a CPU profile of each worker process, and of the direct baseline's.
  const profile = process.env.BENCH_PROFILE_DIR ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE_DIR}`] : [];
  const { url: directTarget, drop: dropDirect } = await databaseFor('direct.db');
  let directRate: number;
  let directCpu: number;
  try {
    const direct = await startProcess(
      [...profile, '--import', 'tsx', join(root, 'bench/direct-deliverer.ts')],
      { ...process.env, ESIG_DIRECT_DATABASE: directTarget, ESIG_DIRECT_RECEIVER: `${rx.url}/direct`, ESIG_DIRECT_CA: rx.certFile, ESIG_DIRECT_DELIVERIES: String(total), ESIG_DIRECT_LOOPS: String(concurrent) },
      /direct: ready/,
    );
    // A baseline that dies (a wrong statement) fails the bench at once, not after waitFor's timeout.
    const died = new Promise<never>((_, reject) => direct.child.once('exit', (code) => reject(new Error(`the direct baseline exited with ${code}:\n${direct.output()}`))));
    died.catch(() => undefined);
    try {
      await Promise.race([rx.waitFor((r) => r.path === '/direct', warmup, 600_000), died]);
      const t0 = performance.now();
      const cpu0 = cpuMs(direct.child.pid);
      await Promise.race([rx.waitFor((r) => r.path === '/direct', total, 600_000), died]);
      directRate = events / ((performance.now() - t0) / 1000);
      directCpu = (cpuMs(direct.child.pid) - cpu0) / events;
    } finally {
      await direct.stop();
    }
  } finally {
    await dropDirect();
  }

  // ---- esig: an endpoint, a backlog of committed events, N worker processes ----------------------
  await createBenchEndpoint(db, ids, masterKey, rx.certFile, `${rx.url}/esig`);
  const committedAt = new Map<string, number>();
  const procs: Array<Awaited<ReturnType<typeof startProcess>>> = [];
  /** Commits `count` events in one transaction and notes when they committed. */
  const emit = async (count: number) => {
    const made = await commitEvents(db.uow, ids, count);
    const now = Date.now();
    for (const e of made) committedAt.set(e.id, now);
  };
  const delivered = () => rx.requests.filter((r) => r.path === '/esig').length;

  // Phase 1, throughput: a backlog of events drained as fast as the workers go. It is committed before any
  // worker starts, so the rate is the workers' own, not how fast this process commits events (on PostgreSQL
  // that took longer than the deliveries) nor how the two contend for SQLite's lock. It is timed from the
  // moment every worker has started (and its CPU read then) to the last delivery, so all of the workers' work
  // on the backlog counts (a version that fans events out in jobs of their own runs those first), and their
  // start-up does not.
  // The first `warmup` deliveries are not timed, as the baseline's first POSTs are not: they open the workers'
  // connections and warm their processes up. The backlog is committed in order, so those are its oldest events.
  for (let done = 0; done < total; done += 250) await emit(Math.min(250, total - done));
  for (let w = 0; w < workers; w++) {
    procs.push(await startProcess([...profile, join(serverRoot, 'examples/server/bin/esig.mjs'), 'worker'], env, /esig: worker started/));
  }
  await rx.waitFor((r) => r.path === '/esig', warmup, 600_000);
  const startedAt = performance.now();
  const cpuAtStart = procs.map((p) => cpuMs(p.child.pid));
  // The receiver runs in this process, and nothing else does meanwhile but waiting for it.
  const receiverAtStart = process.cpuUsage();
  await rx.waitFor((r) => r.path === '/esig', total, 600_000);
  const seconds = (performance.now() - startedAt) / 1000;
  const workerCpu = procs.reduce((sum, p, i) => sum + cpuMs(p.child.pid) - cpuAtStart[i]!, 0);
  const receiverUsed = process.cpuUsage(receiverAtStart);
  const receiverCpu = (receiverUsed.user + receiverUsed.system) / 1000 / events;

  // Phase 2, latency: events at a steady rate well below capacity, one at a time, as live traffic commits them.
  const latencyStartIndex = delivered();
  const steady = Math.max(1, Math.floor(events / seconds / 4));
  const latencyEvents = Math.min(200, steady * 10);
  for (let i = 0; i < latencyEvents; i++) {
    await emit(1);
    await new Promise((r) => setTimeout(r, 1000 / steady));
  }
  await rx.waitFor((r) => r.path === '/esig', total + latencyEvents, 120_000);
  const firstAttempt = new Map<string, number>();
  for (const r of rx.requests.slice(0)) if (r.path === '/esig') {
    const id = String(r.headers['esig-event-id']);
    if (!firstAttempt.has(id)) firstAttempt.set(id, r.at);
  }
  const latencyIds = rx.requests.filter((r) => r.path === '/esig').slice(latencyStartIndex).map((r) => String(r.headers['esig-event-id']));
  const latencies = [...new Set(latencyIds)].map((id) => firstAttempt.get(id)! - committedAt.get(id)!).sort((a, b) => a - b);
  const q = (p: number) => latencies[Math.min(latencies.length - 1, Math.ceil(p * latencies.length) - 1)]!;
  const duplicates = delivered() - firstAttempt.size;
  // A repeat is legitimate only as a retry (a later Esig-Attempt): the same attempt twice would be a worker
  // running one job twice. Say which.
  const seen = new Map<string, string[]>();
  for (const r of rx.requests) if (r.path === '/esig') {
    const key = String(r.headers['esig-event-id']);
    seen.set(key, [...(seen.get(key) ?? []), `${String(r.headers['esig-delivery-id'])}#${String(r.headers['esig-attempt'])}`]);
  }
  const repeats = [...seen].filter(([, a]) => a.length > 1);
  for (const p of procs) await p.stop();

  process.stdout.write(`\nesig bench:webhooks — ${events} events, ${workers} worker process(es), ${values.db}, HTTPS receiver on loopback\n\n`);
  process.stdout.write(`${'scenario'.padEnd(56)} ${'per s'.padEnd(8)} detail\n`);
  process.stdout.write(`${'bare keep-alive HTTPS POSTs, same receiver (baseline)'.padEnd(56)} ${bareRate.toFixed(0).padEnd(8)} ${n} requests, ${concurrent} at a time, from a process of its own; ${bareCpu.toFixed(2)} ms CPU each\n`);
  process.stdout.write(`${'direct: the driver alone, no esig (second baseline)'.padEnd(56)} ${directRate.toFixed(0).padEnd(8)} ${events} deliveries, ${concurrent} at a time, recorded in batches; ${directCpu.toFixed(2)} ms CPU each\n`);
  process.stdout.write(`${`esig deliveries, ${workers} worker(s) × ${loops} job loops`.padEnd(56)} ${(events / seconds).toFixed(0).padEnd(8)} backlog of ${events} drained in ${seconds.toFixed(1)} s, after ${warmup} untimed; ${duplicates} repeated\n`);
  for (const [id, a] of repeats.slice(0, 5)) process.stdout.write(`  repeated: ${id}: ${a.join(', ')}\n`);
  if (Number.isFinite(workerCpu)) process.stdout.write(`${'esig workers\' CPU time per delivery (user + system)'.padEnd(56)} ${''.padEnd(8)} ${(workerCpu / events).toFixed(2)} ms\n`);
  process.stdout.write(`${'esig commit → first attempt, at a steady rate'.padEnd(56)} ${String(steady).padEnd(8)} p50 ${q(0.5)} ms, p99 ${q(0.99)} ms over ${latencies.length} events\n`);
  process.stdout.write(`\nesig delivers at ${((events / seconds / bareRate) * 100).toFixed(1)} % of the bare keep-alive POST rate at the same concurrency\n`);
  process.stdout.write(`the direct baseline delivers at ${((directRate / bareRate) * 100).toFixed(1)} % of it; esig at ${((events / seconds / directRate) * 100).toFixed(1)} % of the direct baseline\n`);
  // The goal (70 % of the bare rate) as a CPU budget: while the backlog drains, the cores are shared by the
  // workers and the receiver, so that rate fits only if a delivery takes at most `cores / rate` of CPU in all,
  // the receiver's share included; and a worker process runs its deliveries on one thread, so one process can
  // give each at most `1 / (its share of the rate)`.
  const goalRate = GOAL * bareRate;
  const all = (CORES * 1000) / goalRate;
  const perProcess = (workers * 1000) / goalRate;
  process.stdout.write(
    `goal ${GOAL * 100} % (${goalRate.toFixed(0)} deliveries/s on ${CORES} cores): ${all.toFixed(2)} ms of CPU per delivery in all, ${receiverCpu.toFixed(2)} of it the receiver's, ` +
      `so at most ${(all - receiverCpu).toFixed(2)} ms for the workers${values.db === 'postgres' ? ' and their PostgreSQL backends (not counted here)' : ''}, ` +
      `and at most ${perProcess.toFixed(2)} ms on each of ${workers} worker process(es)' one thread; esig's workers used ${(workerCpu / events).toFixed(2)} ms, the direct baseline ${directCpu.toFixed(2)} ms\n`,
  );
} finally {
  await db.close();
  await rx.close();
  await dropDatabase();
  rmSync(dir, { recursive: true, force: true });
}
