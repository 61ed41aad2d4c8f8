/**
 * `npm run bench:instructions [-- --target api|webhooks --requests 1000 --warm-up 4000 --connections 16 --server-root <checkout, built> --dumps <folder>]`
 *
 * `--target webhooks` counts webhook deliveries in place of create-requests: the direct baseline's deliverer
 * (bench/direct-deliverer.ts, the driver alone) and an `esig worker` with 16 job loops, each delivering to an
 * HTTPS receiver in this process, on SQLite files; instructions per delivery, counted after `--warm-up`
 * deliveries (5,000 by default for this target: with 3,000, TurboFan was still compiling a tenth of the count).
 *
 * Machine instructions per create-request, counted by valgrind's callgrind in each server process: bare Express
 * (the issue's baseline), the direct baseline (the driver alone, bench/direct-server.ts) and `esig serve`
 * without and with an Idempotency-Key, all on SQLite files. Each server runs under callgrind with counting off
 * while it starts and takes `--warm-up` requests; then counting goes on, `--requests` requests are sent, and
 * the count (every thread of the process: the event loop, V8's helpers, libuv's pool, the SQLite
 * checkpointer) is read from a dump and divided by the requests answered.
 *
 * Why: on a shared virtual machine the CPU time a request takes moves by half from one run to the next (the
 * host's other guests take the cores; this machine has no hardware counters for `perf stat` and reports no
 * steal time), so a change of a few percent cannot be told from the noise by timing. Instructions do not move
 * with the host's load. The totals still spread by about a tenth between runs of one build, from what falls
 * in the counted window: a mark-compact or not, V8 still optimizing or not. The count of each function does
 * not: with `--dumps`, `callgrind_annotate` on two runs' dumps gives the same count per request, within a
 * percent or two, for a function on the request path (the slow paths of V8's property caches, JSON, a digest;
 * SQLite's statements also grow with the tables' depth), so a change to one is measured there. What it does not
 * see: time in the kernel (system calls, the network stack, page faults) and how fast the instructions run (cache
 * misses, a core's frequency). Throughput and latency stay bench:api's.
 *
 * Needs valgrind (Debian's `valgrind`); it runs the servers 20–50 times slower than usual, a few minutes in all.
 */
import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Principal } from '@esig/core';
import { createUlidGenerator, systemClock } from '@esig/runtime-node';
import { createKeyStandalone, loadConfig, openDatabase } from '@esig/server';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { BARE_BODY, DIRECT_KEY, benchServerEnv, createRequestSpecs, requestsFrom, seedDocuments } from './create-requests.js';
import type { RequestSpec } from './lib.js';
import { measure, startProcess } from './lib.js';
import { commitEvents, createBenchEndpoint, workerEnv } from './webhook-setup.js';

const { values } = parseArgs({
  options: {
    target: { type: 'string', default: 'api' },
    requests: { type: 'string', default: '1000' },
    'warm-up': { type: 'string' },
    connections: { type: 'string', default: '16' },
    'server-root': { type: 'string' },
    // A folder to keep callgrind's dumps in (one per server, for `callgrind_annotate`); by default they go with
    // the bench's temporary folder.
    dumps: { type: 'string' },
  },
});
if (values.target !== 'api' && values.target !== 'webhooks') {
  console.error('--target is api or webhooks');
  process.exit(2);
}
const requests = Number(values.requests);
const warmUpRequests = Number(values['warm-up'] ?? (values.target === 'api' ? 4000 : 5000));
const connections = Number(values.connections);
if (![requests, warmUpRequests, connections].every((n) => Number.isInteger(n) && n > 0)) {
  console.error('--requests, --warm-up and --connections are whole numbers above 0');
  process.exit(2);
}
for (const tool of ['valgrind', 'callgrind_control']) {
  try {
    execFileSync(tool, ['--version'], { stdio: 'ignore' });
  } catch {
    console.error(`${tool} is not on PATH: install Debian's valgrind (apt-get install -y valgrind)`);
    process.exit(2);
  }
}

const root = new URL('..', import.meta.url).pathname;
const serverRoot = values['server-root'] ?? root;
const dir = mkdtempSync(join(tmpdir(), 'esig-instructions-'));
const dumps = values.dumps ?? dir;
if (values.dumps !== undefined) mkdirSync(dumps, { recursive: true });

/**
 * Counting off at start: V8 compiles and the modules load uncounted (and several times faster), and the dump
 * holds only what was counted after `-i on` and a zero. `--smc-check=all-non-file` makes valgrind notice code
 * V8 writes into memory it already ran (valgrind's default checks only code on the stack).
 */
const callgrind = (name: string) => ['valgrind', '--tool=callgrind', '--instr-atstart=no', '--smc-check=all-non-file', `--callgrind-out-file=${join(dumps, `${name}.%p.out`)}`];

const control = (pid: number, ...args: string[]) => execFileSync('callgrind_control', [...args, String(pid)], { stdio: 'ignore' });

/** The total of the newest dump of a process (its `totals:` line: instructions, the one event counted). */
const lastTotal = (name: string, pid: number): number => {
  const files = readdirSync(dumps).filter((f) => f.startsWith(`${name}.${pid}.out.`)).sort((a, b) => Number(a.split('.').pop()) - Number(b.split('.').pop()));
  const text = readFileSync(join(dumps, files[files.length - 1]!), 'utf8');
  const m = /^totals: (\d+)/m.exec(text) ?? /^summary: (\d+)/m.exec(text);
  if (m === null) throw new Error(`no totals in ${files[files.length - 1]}`);
  return Number(m[1]);
};

interface Count {
  readonly name: string;
  readonly perRequest: number;
  readonly non2xx: number;
}
const counts: Count[] = [];

/** `n` requests from `spec(first)` on, 16 at a time (autocannon), each on a keep-alive connection. */
const send = (url: string, n: number, first: number, spec: (i: number) => RequestSpec) =>
  // Under callgrind a request takes milliseconds, and the queue of 16 connections several times that.
  measure('load', { url, connections, amount: n, timeout: 120, requests: requestsFrom(spec, first) });

/** Warms one server up uncounted, then counts `requests` of `spec`'s. */
const count = async (name: string, pid: number, url: string, spec: (i: number) => RequestSpec): Promise<void> => {
  process.stderr.write(`  ${name}: warming up (${warmUpRequests} requests)…\n`);
  await send(url, warmUpRequests, 0, spec);
  control(pid, '-i', 'on');
  control(pid, '-z');
  process.stderr.write(`  ${name}: counting (${requests} requests)…\n`);
  const f = await send(url, requests, warmUpRequests, spec);
  control(pid, '-d');
  control(pid, '-i', 'off');
  counts.push({ name, perRequest: lastTotal(fileName(name), pid) / f.requests, non2xx: f.non2xx });
};
const fileName = (name: string) => name.replace(/[^a-z0-9]+/gi, '-').toLowerCase();

/** Prints the counts, each beside the first (the baseline); the baseline's count. */
const printCounts = (who: string, unit: string, ratio: string, invalid: string): number => {
  const baseline = counts[0]!.perRequest;
  process.stdout.write(`\n${who.padEnd(58)}${`instructions per ${unit}`.padStart(26)}${ratio.padStart(16)}\n`);
  for (const c of counts) {
    process.stdout.write(
      `${c.name.padEnd(58)}${Math.round(c.perRequest).toLocaleString('en').padStart(26)}${(c.perRequest / baseline).toFixed(2).padStart(16)}` +
        (c.non2xx === 0 ? '' : `  (${c.non2xx} ${invalid}: these figures are not valid)`) +
        '\n',
    );
  }
  return baseline;
};

const needed = warmUpRequests + requests;
const masterKey = randomBytes(32).toString('hex');

/** Create-requests: bare Express, the direct baseline, esig without and with an Idempotency-Key. */
const countApi = async (): Promise<void> => {
  process.stdout.write(`esig bench:instructions — ${requests} requests counted after ${warmUpRequests} uncounted, ${connections} connections; server from ${serverRoot}\n`);

  {
    const name = 'bare Express handler (baseline)';
    const bare = await startProcess(['--import', 'tsx', join(root, 'bench/bare-server.ts')], process.env, /listening (\d+)/, callgrind(fileName(name)));
    try {
      await count(name, bare.child.pid!, `http://127.0.0.1:${bare.match[1]}`, () => ({ method: 'POST', path: '/bare', headers: { 'content-type': 'application/json' }, body: BARE_BODY }));
    } finally {
      await bare.stop();
    }
  }

  {
    const name = 'direct: driver only, no esig (SQLite)';
    const direct = await startProcess(
      ['--import', 'tsx', join(root, 'bench/direct-server.ts')],
      { ...process.env, ESIG_DIRECT_DATABASE: `sqlite:${join(dir, 'direct.db')}`, ESIG_DIRECT_DOCUMENTS: String(needed), ESIG_DIRECT_KEY: DIRECT_KEY },
      /listening (\d+)/,
      callgrind(fileName(name)),
    );
    try {
      await count(name, direct.child.pid!, `http://127.0.0.1:${direct.match[1]}`, createRequestSpecs(DIRECT_KEY, Array.from({ length: needed }, (_, i) => `doc_${i + 1}`), false));
    } finally {
      await direct.stop();
    }
  }

  for (const idempotent of [false, true]) {
    const name = `esig POST /signature-requests${idempotent ? ' + Idempotency-Key' : ''} (SQLite)`;
    // A database of its own per scenario: the second does not start on the first's rows.
    const env = benchServerEnv(`sqlite:${join(dir, `esig-${idempotent ? 'key' : 'plain'}.db`)}`, masterKey);
    const config = loadConfig(env);
    const issued = await createKeyStandalone(config, { orgName: 'bench', mode: 'test', scopes: ['*'], name: 'bench' });
    const principal: Principal = { tenant: { orgId: issued.org.id, mode: 'test' }, scopes: ['*'], credential: { kind: 'api_key', keyId: issued.key.id } };
    const docs = await seedDocuments(config, principal, needed);
    const esig = await startProcess([join(serverRoot, 'examples/server/bin/esig.mjs'), 'serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/, callgrind(fileName(name)));
    try {
      await count(name, esig.child.pid!, `http://127.0.0.1:${esig.match[1]}`, createRequestSpecs(issued.secret, docs, idempotent));
    } finally {
      await esig.stop();
    }
  }

  const bare = printCounts('server', 'request', '× bare Express', 'answers not 2xx');
  // The issue's goal as instructions: 50 % of bare Express's rate is at most twice its work per request.
  const plain = counts[2]!.perRequest;
  const keyed = counts[3]!.perRequest;
  process.stdout.write(
    `\nthe goals (50 % of bare Express, SQLite) read as work: at most ${Math.round(2 * bare).toLocaleString('en')} instructions per request; ` +
      `esig uses ${Math.round(plain).toLocaleString('en')} (${((bare / plain) * 100).toFixed(1)} %), ${Math.round(keyed).toLocaleString('en')} with a key (${((bare / keyed) * 100).toFixed(1)} %); ` +
      `the key adds ${Math.round(keyed - plain).toLocaleString('en')}\n`,
  );
};

/**
 * Webhook deliveries: the direct baseline's deliverer and an `esig worker`, each with 16 deliveries in flight,
 * to a receiver in this process. Each is warmed up uncounted on its first `--warm-up` deliveries.
 */
const countWebhooks = async (): Promise<void> => {
  process.stdout.write(`esig bench:instructions — ${requests} webhook deliveries counted after ${warmUpRequests} uncounted, 16 in flight; worker from ${serverRoot}\n`);
  const rx = await startHttpsReceiver();
  try {
    {
      // The direct baseline seeds its deliveries and delivers them all as soon as it starts: counting goes on
      // once the receiver has had the warm-up's, and the deliveries counted are those that arrive after that.
      const name = 'direct: driver only, no esig (SQLite)';
      const path = '/direct';
      const direct = await startProcess(
        ['--import', 'tsx', join(root, 'bench/direct-deliverer.ts')],
        { ...process.env, ESIG_DIRECT_DATABASE: `sqlite:${join(dir, 'direct-deliverer.db')}`, ESIG_DIRECT_RECEIVER: `${rx.url}${path}`, ESIG_DIRECT_CA: rx.certFile, ESIG_DIRECT_DELIVERIES: String(needed), ESIG_DIRECT_LOOPS: '16' },
        /direct: ready/,
        callgrind(fileName(name)),
      );
      try {
        process.stderr.write(`  ${name}: warming up (${warmUpRequests} deliveries)…\n`);
        await rx.waitFor((r) => r.path === path, warmUpRequests, 1_800_000);
        control(direct.child.pid!, '-i', 'on');
        control(direct.child.pid!, '-z');
        const before = rx.requests.filter((r) => r.path === path).length;
        process.stderr.write(`  ${name}: counting (${needed - before} deliveries)…\n`);
        await rx.waitFor((r) => r.path === path, needed, 1_800_000);
        control(direct.child.pid!, '-d');
        counts.push({ name, perRequest: lastTotal(fileName(name), direct.child.pid!) / (needed - before), non2xx: 0 });
      } finally {
        await direct.stop();
      }
    }
    {
      const name = 'esig worker, 16 job loops (SQLite)';
      const path = '/esig';
      const key = randomBytes(32);
      const env = workerEnv({ databaseUrl: `sqlite:${join(dir, 'esig-worker.db')}`, masterKey: key, certFile: rx.certFile, loops: 16, sqlite: true });
      const db = await openDatabase(loadConfig(env));
      const ids = createUlidGenerator(systemClock);
      try {
        await createBenchEndpoint(db, ids, key, rx.certFile, `${rx.url}${path}`);
        const worker = await startProcess([join(serverRoot, 'examples/server/bin/esig.mjs'), 'worker'], env, /esig: worker started/, callgrind(fileName(name)));
        try {
          let emitted = 0;
          /** Commits `n` events in one transaction (from this process, uncounted) and waits for their deliveries. */
          const deliver = async (n: number) => {
            await commitEvents(db.uow, ids, n);
            emitted += n;
            await rx.waitFor((r) => r.path === path, emitted, 1_800_000);
          };
          process.stderr.write(`  ${name}: warming up (${warmUpRequests} deliveries)…\n`);
          for (let done = 0; done < warmUpRequests; done += 1000) await deliver(Math.min(1000, warmUpRequests - done));
          control(worker.child.pid!, '-i', 'on');
          control(worker.child.pid!, '-z');
          process.stderr.write(`  ${name}: counting (${requests} deliveries)…\n`);
          await deliver(requests);
          control(worker.child.pid!, '-d');
          // A delivery made twice would be counted as one: say so (none is expected; a retry needs a failure).
          const repeated = rx.requests.filter((r) => r.path === path).length - emitted;
          counts.push({ name, perRequest: lastTotal(fileName(name), worker.child.pid!) / requests, non2xx: repeated });
        } finally {
          await worker.stop();
        }
      } finally {
        await db.close();
      }
    }
  } finally {
    await rx.close();
  }
  printCounts('deliverer', 'delivery', '× direct', 'deliveries repeated');
};

try {
  await (values.target === 'api' ? countApi() : countWebhooks());
  if (counts.some((c) => c.non2xx !== 0)) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
