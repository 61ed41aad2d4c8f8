import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

export interface Figures {
  readonly name: string;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly non2xx: number;
  /**
   * Open-loop runs only: how late the load generator sent requests (ms after their due time, p99 and most).
   * A request sent late is timed from when it was due, so a generator that stalls (its own GC, the process
   * waiting for a core) shows in the latencies as if the server had; this says how much of it was the sender's.
   */
  readonly late?: { readonly p99: number; readonly max: number };
}

export const measure = async (name: string, opts: autocannon.Options): Promise<Figures> => {
  const r = await autocannon(opts);
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx + r.errors };
};

export interface RequestSpec {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/**
 * Latency at a fixed arrival rate (open loop): request i is due at start + i / rate, sent then whether or not
 * earlier ones have been answered, and its latency runs from when it was due to the end of its answer, so a
 * generator that falls behind (or a server that stalls) shows in the figures instead of hiding in them.
 *
 * autocannon's `overallRate` is not this: it gives each connection a budget per second, which the connection
 * spends back to back from the start of each second and then waits out. At "half load" that is a burst at
 * full speed for half of every second followed by silence, so its p99 measured the queue of a saturated
 * server (and, with its coordinated-omission correction at a 1 ms expected interval, padded it further):
 * the bare baseline itself read 72 ms p99 at 100 req/s that way.
 */
export const measureAtRate = async (
  name: string,
  opts: { url: string; rate: number; duration: number; connections: number; request: (i: number) => RequestSpec },
): Promise<Figures> => {
  const target = new URL(opts.url);
  // Keep-alive connections, at most `connections` of them: a request due while all are busy waits for one,
  // and that wait counts in its latency as it would for a real client pool.
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.connections });
  const total = Math.max(1, Math.round(opts.rate * opts.duration));
  const interval = 1000 / opts.rate;
  const latencies: number[] = [];
  const lateness: number[] = [];
  let non2xx = 0;
  let last = 0;
  const start = performance.now() + 10;
  try {
    await new Promise<void>((done) => {
      let sent = 0;
      let finished = 0;
      const end = (due: number, ok: boolean) => {
        last = performance.now();
        latencies.push(last - due);
        if (!ok) non2xx++;
        if (++finished === total) done();
      };
      const fire = (i: number) => {
        const due = start + i * interval;
        lateness.push(performance.now() - due);
        const spec = opts.request(i);
        const req = http.request(
          {
            agent,
            host: target.hostname,
            port: target.port,
            method: spec.method,
            path: spec.path,
            headers: { ...spec.headers, 'content-length': String(Buffer.byteLength(spec.body)) },
          },
          (res) => {
            res.resume();
            res.once('end', () => end(due, res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 300));
          },
        );
        req.once('error', () => end(due, false));
        // An answer that never comes fails its request rather than hanging the bench.
        req.setTimeout(30_000, () => req.destroy(new Error('no answer within 30 s')));
        req.end(spec.body);
      };
      // Everything due by now goes out, then a timer for the next due time (timers have a 1 ms grain, so at
      // high rates a few go out together, each still timed from its own due time).
      const tick = () => {
        const now = performance.now();
        while (sent < total && start + sent * interval <= now) fire(sent++);
        if (sent < total) setTimeout(tick, Math.max(0, start + sent * interval - performance.now()));
      };
      setTimeout(tick, Math.max(0, start - performance.now()));
    });
  } finally {
    agent.destroy();
  }
  const round = (x: number) => Math.round(x * 10) / 10;
  return {
    name,
    rps: (total * 1000) / (last - start),
    p50: round(percentile(latencies, 50)),
    p99: round(percentile(latencies, 99)),
    requests: total,
    non2xx,
    late: { p99: round(percentile(lateness, 99)), max: round(lateness.reduce((m, x) => Math.max(m, x), 0)) },
  };
};

/** Requests per second that succeeded (2xx): what a scenario served, with its fast failures left out. */
export const successRate = (f: Figures): number => (f.requests === 0 ? 0 : (f.rps * (f.requests - f.non2xx)) / f.requests);

export const printTable = (figures: readonly Figures[]) => {
  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`\n${pad('scenario', 52)} ${pad('req/s', 9)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('requests', 9)} non-2xx\n`);
  for (const f of figures)
    process.stdout.write(
      `${pad(f.name, 52)} ${pad(f.rps.toFixed(0), 9)} ${pad(String(f.p50), 8)} ${pad(String(f.p99), 8)} ${pad(String(f.requests), 9)} ${f.non2xx}` +
        (f.late === undefined ? '' : `  (sent late: p99 ${f.late.p99} ms, most ${f.late.max} ms)`) +
        '\n',
    );
};

/**
 * Starts a server as its own process (so load generation and the server do not share one event loop) and
 * resolves once `ready` matches its output.
 */
export const startProcess = async (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
  // A command that runs Node (`valgrind --tool=callgrind …`), Node's path added after it; none: Node itself.
  wrap: readonly string[] = [],
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string; stop: () => Promise<void> }> => {
  const [command, ...before] = [...wrap, process.execPath];
  const child = spawn(command!, [...before, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const match = await new Promise<RegExpExecArray>((resolve, reject) => {
    // Generous: on a shared machine under load, a start with migrations can take a while. A process that
    // does not start is killed, so a failed bench leaves nothing running.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} did not start within 120 s:\n${out}`));
    }, 120_000);
    let started = false;
    const onData = (d: Buffer) => {
      // Once started, a server logging a line per request would grow this without bound: keep the tail
      // (for a failure's message) and stop matching.
      out = started ? (out + d.toString()).slice(-65_536) : out + d.toString();
      if (started) return;
      const m = ready.exec(out);
      if (m) {
        started = true;
        clearTimeout(timer);
        resolve(m);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}:\n${out}`)));
  });
  return {
    child,
    match,
    output: () => out,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      await exited;
    },
  };
};

/** A database of its own on the PostgreSQL server at `adminUrl` (a maintenance database's URL), and how to drop it. */
export const throwawayPostgres = async (adminUrl: string): Promise<{ url: string; drop: () => Promise<void> }> => {
  const pg = (await import('pg')).default;
  const name = `esig_bench_${randomBytes(4).toString('hex')}`;
  const admin = async (sql: string) => {
    const c = new pg.Client({ connectionString: adminUrl });
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return { url: url.toString(), drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`) };
};

/** The `p`-th percentile (nearest rank) of `xs`. */
export const percentile = (xs: readonly number[], p: number): number => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
};

/**
 * The `--postgres-url` option every bench takes: the server where it makes its throwaway databases, by default
 * the tests' (ESIG_TEST_POSTGRES_URL) or a local one.
 */
export const POSTGRES_URL_OPTION = {
  type: 'string',
  default: process.env.ESIG_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
} as const;

/** Calls `one` `count` times, `lanes` at a time: each lane starts its next call when its last has ended. */
export const inLanes = async (count: number, lanes: number, one: () => Promise<unknown>): Promise<void> => {
  let next = 0;
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      while (next < count) {
        next += 1;
        await one();
      }
    }),
  );
};

/**
 * CPU time (user + system, ms) the given processes have used so far, from /proc (Linux; elsewhere nothing).
 * Throughput on a shared machine swings with other work's load; the CPU a request costs the server and the
 * database barely does, so it is the steadier figure to compare two versions by.
 */
export const cpuMsOf = (pids: readonly number[]): Map<number, number> => {
  const out = new Map<number, number>();
  for (const pid of pids) {
    try {
      // Fields after the command name (which may hold spaces) start at field 3; utime and stime are 14 and 15.
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(pid, ((Number(f[11]) + Number(f[12])) * 1000) / 100);
    } catch {
      /* gone, or no /proc */
    }
  }
  return out;
};

/** The PostgreSQL backends serving `database` now (the server's pool). */
export const backendsOf = async (url: string | null): Promise<number[]> => {
  if (url === null) return [];
  const pg = (await import('pg')).default;
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()');
    return r.rows.map((x) => x.pid);
  } finally {
    await c.end();
  }
};

/**
 * A fingerprint of what a checkout runs: the SHA-256 of every compiled file (`dist/`) of its packages, adapters
 * and examples, by path and content, cut to 12 hex digits. The pair benches print it for both sides, so that
 * a comparison says what it compared. Why: `tsc -b` re-emits only what its build info calls stale, so a `dist/`
 * file edited by hand for an experiment (an upper bound, say) outlives `npm run build`; one session then
 * measured its own edited build against a clean one for four runs while it believed them the same.
 */
export const buildFingerprint = (root: string): string => {
  const files: string[] = [];
  const walk = (dir: string, inDist: boolean) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path, inDist || e.name === 'dist');
      else if (inDist && /\.(m?js|json)$/.test(e.name)) files.push(path);
    }
  };
  for (const top of ['packages', 'adapters', 'examples']) walk(join(root, top), false);
  const hash = createHash('sha256');
  for (const f of files.sort()) hash.update(relative(root, f)).update('\0').update(readFileSync(f)).update('\0');
  return `${hash.digest('hex').slice(0, 12)} (${files.length} files)`;
};

/** The lines a pair bench prints about its two builds: each fingerprint, and whether they are the same build. */
export const describeBuilds = (roots: Readonly<Record<'this' | 'other', string>>): string => {
  const mine = buildFingerprint(roots.this);
  const theirs = buildFingerprint(roots.other);
  return (
    `builds: this ${mine}, other ${theirs}\n` +
    (mine === theirs ? 'the two builds are the same: an A/A run, whose differences are the noise of this machine\n' : '')
  );
};

/**
 * Two builds' rounds compared pair by pair (each pair ran back to back): in how many pairs `mine` was lower, the
 * two-sided exact sign test's p-value for that count (the chance of a count at least that uneven if neither build
 * were cheaper; a tie counts for neither, and is left out), and the median of the pairs' ratios mine/theirs.
 *
 * Why: an A/A run of bench:webhooks-pair on one machine (the same build on both sides) put one side 7 % ahead in
 * mean rate and ahead in 5 of 8 pairs; a count like "less in 6 of 8" alone reads as a finding, where its p-value
 * (0.29) says it is not one.
 */
export const pairedComparison = (pairs: ReadonlyArray<readonly [mine: number, theirs: number]>): { lower: number; n: number; p: number; medianRatio: number } => {
  const n = pairs.length;
  let lower = 0;
  let ties = 0;
  for (const [a, b] of pairs) {
    if (a < b) lower += 1;
    else if (a === b) ties += 1;
  }
  // Ties are left out: the test counts among the pairs that differ.
  const m = n - ties;
  const k = Math.min(lower, m - lower);
  let tail = 0;
  let c = 1; // C(m, 0)
  for (let i = 0; i <= k; i++) {
    tail += c;
    c = (c * (m - i)) / (i + 1);
  }
  const p = m === 0 ? 1 : Math.min(1, (2 * tail) / 2 ** m);
  const ratios = pairs.filter(([, b]) => b > 0).map(([a, b]) => a / b);
  return { lower, n, p, medianRatio: ratios.length === 0 ? Number.NaN : percentile(ratios, 50) };
};

/**
 * The rounds of a pair bench taken two by two as they ran (ABBA: this/other, then other/this, …), each pair as
 * [this build's value, the other's]. A trailing round without its partner is left out.
 */
export const adjacentPairs = <R>(rounds: readonly R[], isThis: (r: R) => boolean, value: (r: R) => number): Array<readonly [number, number]> => {
  const out: Array<readonly [number, number]> = [];
  for (let i = 0; i + 1 < rounds.length; i += 2) {
    const [a, b] = [rounds[i]!, rounds[i + 1]!];
    out.push(isThis(a) ? [value(a), value(b)] : [value(b), value(a)]);
  }
  return out;
};

/** `this build used less CPU in 6 of 8 adjacent pairs of rounds (sign test p = 0.29), median ratio this/other 0.962`. */
export const describePairs = (what: string, pairs: ReadonlyArray<readonly [number, number]>): string => {
  const c = pairedComparison(pairs);
  return `this build used less ${what} in ${c.lower} of ${c.n} adjacent pairs of rounds (sign test p = ${c.p.toFixed(c.p < 0.01 ? 4 : 2)}), median ratio this/other ${c.medianRatio.toFixed(3)}\n`;
};
