/**
 * `npm run bench:webhooks-pair -- --server-root <other checkout, built> [--db sqlite|postgres] [--rounds 6] [--events 3000] [--warmup 5000] [--concurrency 16]`
 *
 * Two builds' webhook workers side by side, as `bench:pair` does for the API: this checkout's `esig worker` and
 * another's, each on a database of its own with one endpoint at the same local HTTPS receiver, both running
 * all the time. In each round one of them drains a backlog of `--events` events committed in one transaction
 * (so none is delivered before all are there); the rounds go ABBA, so that a drift of the machine's load falls
 * on both alike. Each round reports the worker's CPU per delivery (from /proc, the commit included, during which
 * the worker waits) and its deliveries per second from the commit to the last delivery.
 * Whole runs of `bench:webhooks`, alternated, gave one build 0.38–0.59 ms per delivery and the other 0.47–0.67 ms
 * on one day: a change of a few per cent needs the rounds side by side.
 *
 * Both databases are made and migrated by this checkout's code (as `bench:webhooks --server-root` does), so the
 * other build must read the same schema.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { createUlidGenerator, systemClock } from '@esig/runtime-node';
import { loadConfig, openDatabase } from '@esig/server';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { POSTGRES_URL_OPTION, adjacentPairs, cpuMsOf, describeBuilds, describePairs, startProcess, throwawayPostgres } from './lib.js';
import { commitEvents, createBenchEndpoint, workerEnv } from './webhook-setup.js';

const { values } = parseArgs({
  options: {
    'server-root': { type: 'string' },
    db: { type: 'string', default: 'sqlite' },
    rounds: { type: 'string', default: '6' },
    events: { type: 'string', default: '3000' },
    // Untimed deliveries for each worker first: its connections opened and its delivery path compiled. With 1,000
    // the first rounds still cost a third more than the last ones.
    warmup: { type: 'string', default: '5000' },
    concurrency: { type: 'string', default: '16' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
if (values['server-root'] === undefined) {
  console.error('--server-root <another checkout of esig, built> is required: the build to compare this one with');
  process.exit(2);
}
if (values.db !== 'sqlite' && values.db !== 'postgres') {
  console.error('--db is sqlite or postgres');
  process.exit(2);
}
const rounds = Number(values.rounds);
const events = Number(values.events);
const loops = Number(values.concurrency);
const roots = { this: resolve(import.meta.dirname, '..'), other: resolve(values['server-root']) };
// Said first, so that a run comparing what it should not (an edited dist/, a build not rebuilt) can be stopped.
const builds = describeBuilds(roots);
process.stdout.write(builds);
type Label = keyof typeof roots;
const dir = mkdtempSync(join(tmpdir(), 'esig-bench-whpair-'));
const ids = createUlidGenerator(systemClock);

const rx = await startHttpsReceiver();

/** A build's worker on a database of its own, with an endpoint at `/<label>` of the receiver. */
const startSide = async (label: Label) => {
  const database = values.db === 'postgres' ? await throwawayPostgres(values['postgres-url']!) : { url: `sqlite:${join(dir, `${label}.db`)}`, drop: async () => undefined };
  const masterKey = randomBytes(32);
  const env = workerEnv({ databaseUrl: database.url, masterKey, certFile: rx.certFile, loops, sqlite: values.db === 'sqlite' });
  const db = await openDatabase(loadConfig(env));
  await createBenchEndpoint(db, ids, masterKey, rx.certFile, `${rx.url}/${label}`);
  const worker = await startProcess([join(roots[label], 'examples/server/bin/esig.mjs'), 'worker'], env, /esig: worker started/);
  let emitted = 0;
  /**
   * Commits `count` events in one transaction (none can be delivered before all are), and waits until each has
   * been delivered; the seconds from the commit to the last delivery.
   */
  const drain = async (count: number): Promise<number> => {
    await commitEvents(db.uow, ids, count);
    const committed = performance.now();
    emitted += count;
    await rx.waitFor((r) => r.path === `/${label}`, emitted, 600_000);
    return (performance.now() - committed) / 1000;
  };
  const stop = async () => {
    await worker.stop();
    await db.close();
    await database.drop();
  };
  return { label, pid: worker.child.pid!, drain, stop };
};

interface Round {
  readonly label: Label;
  readonly cpuMs: number;
  readonly seconds: number;
}

const sides = { this: await startSide('this'), other: await startSide('other') };
try {
  for (const s of Object.values(sides)) await s.drain(Number(values.warmup));
  const order: Label[] = [];
  for (let r = 0; r < rounds; r++) order.push(...((r % 2 === 0 ? ['this', 'other'] : ['other', 'this']) as Label[]));
  const results: Round[] = [];
  for (const label of order) {
    const s = sides[label];
    const before = cpuMsOf([s.pid]).get(s.pid)!;
    const seconds = await s.drain(events);
    const cpu = cpuMsOf([s.pid]).get(s.pid)! - before;
    results.push({ label, cpuMs: cpu, seconds });
    process.stdout.write(`${label.padEnd(5)} ${(events / seconds).toFixed(0).padStart(6)} deliveries/s  CPU per delivery ${(cpu / events).toFixed(3)} ms\n`);
  }
  const summary = (label: Label) => {
    const mine = results.filter((r) => r.label === label);
    const cpu = mine.reduce((n, r) => n + r.cpuMs, 0) / (events * mine.length);
    const rate = mine.reduce((n, r) => n + events / r.seconds, 0) / mine.length;
    return `${label.padEnd(5)} (${roots[label]}): mean ${rate.toFixed(0)} deliveries/s, CPU per delivery ${cpu.toFixed(3)} ms`;
  };
  // Adjacent rounds (this, other) or (other, this) compared: how often this build used less CPU, and whether that
  // count says more than the noise.
  const pairs = adjacentPairs(results, (r) => r.label === 'this', (r) => r.cpuMs);
  process.stdout.write(
    `\nwebhook deliveries on ${values.db === 'sqlite' ? 'SQLite' : 'PostgreSQL'}, ${rounds} rounds of ${events} events each, ${loops} job loops:\n${summary('this')}\n${summary('other')}\n` +
      describePairs('CPU', pairs) +
      builds,
  );
} finally {
  for (const s of Object.values(sides)) await s.stop();
  await rx.close();
  rmSync(dir, { recursive: true, force: true });
}
