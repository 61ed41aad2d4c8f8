/**
 * `npm run bench:transactions [-- --roots <checkout>,<checkout> --transactions 4000 --concurrency 8 --rounds 3]`
 *
 * What a PostgreSQL transaction costs through esig's unit of work: one that reads a row by key, then writes twice
 * (the shape of a create-request), 8 at a time. Beside it, in the same run, the baseline: the same five round
 * trips (BEGIN, read, insert, update, COMMIT) on node-postgres alone, each awaited before the next. Prints
 * transactions per second and the CPU per transaction of the client process and of the PostgreSQL backends.
 * `--roots` takes built checkouts (default: this one), to compare versions: each round runs the baseline and
 * then every root, alternating, each in a fresh process and a throwaway database of its own.
 */
import { execFile } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { POSTGRES_URL_OPTION, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    roots: { type: 'string' },
    transactions: { type: 'string', default: '4000' },
    concurrency: { type: 'string', default: '8' },
    rounds: { type: 'string', default: '3' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const here = dirname(fileURLToPath(import.meta.url));
const roots = (values.roots ?? join(here, '..')).split(',').map((r) => resolve(r.trim()));
const rounds = Number(values.rounds);
if (![values.transactions, values.concurrency, values.rounds].every((v) => Number.isInteger(Number(v)) && Number(v) >= 1)) {
  console.error('--transactions, --concurrency and --rounds are positive integers');
  process.exit(2);
}

interface Figures {
  readonly perSecond: number;
  readonly clientUs: number;
  readonly backendUs: number;
}
const measureOne = async (who: string): Promise<Figures> => {
  const db = await throwawayPostgres(values['postgres-url']!);
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [join(here, 'transactions-child.mjs'), who, db.url, values.transactions!, values.concurrency!]);
    return JSON.parse(stdout.trim().split('\n').pop()!) as Figures;
  } finally {
    await db.drop();
  }
};

console.log(`esig bench:transactions — ${values.transactions} transactions (read, insert, update), ${values.concurrency} at a time, ${rounds} rounds`);
const results = new Map<string, Figures[]>();
const label = (who: string) => (who === 'raw' ? 'node-postgres alone (baseline)' : `esig unit of work, ${who}`);
for (let round = 1; round <= rounds; round++) {
  for (const who of ['raw', ...roots]) {
    const f = await measureOne(who);
    results.set(who, [...(results.get(who) ?? []), f]);
    console.log(`  round ${round}: ${label(who)}: ${f.perSecond}/s, client ${f.clientUs} µs, backends ${f.backendUs} µs per transaction`);
  }
}
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log('\nmedians of the rounds:');
const base = median(results.get('raw')!.map((f) => f.perSecond));
for (const [who, fs] of results) {
  const rate = median(fs.map((f) => f.perSecond));
  console.log(
    `  ${label(who)}: ${rate}/s (${((100 * rate) / base).toFixed(1)} % of the baseline), client ${median(fs.map((f) => f.clientUs))} µs, backends ${median(fs.map((f) => f.backendUs))} µs per transaction`,
  );
}
