import { randomBytes } from 'node:crypto';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import autocannon from 'autocannon';

export interface Figures {
  readonly name: string;
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly non2xx: number;
}

export const measure = async (name: string, opts: autocannon.Options): Promise<Figures> => {
  const r = await autocannon(opts);
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, requests: r.requests.total, non2xx: r.non2xx + r.errors };
};

/** Requests per second that succeeded (2xx): what a scenario served, with its fast failures left out. */
export const successRate = (f: Figures): number => (f.requests === 0 ? 0 : (f.rps * (f.requests - f.non2xx)) / f.requests);

export const printTable = (figures: readonly Figures[]) => {
  const pad = (s: string, n: number) => s.padEnd(n);
  process.stdout.write(`\n${pad('scenario', 52)} ${pad('req/s', 9)} ${pad('p50 ms', 8)} ${pad('p99 ms', 8)} ${pad('requests', 9)} non-2xx\n`);
  for (const f of figures)
    process.stdout.write(`${pad(f.name, 52)} ${pad(f.rps.toFixed(0), 9)} ${pad(String(f.p50), 8)} ${pad(String(f.p99), 8)} ${pad(String(f.requests), 9)} ${f.non2xx}\n`);
};

/**
 * Starts a server as its own process (so load generation and the server do not share one event loop) and
 * resolves once `ready` matches its output.
 */
export const startProcess = async (
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray; output: () => string; stop: () => Promise<void> }> => {
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
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
