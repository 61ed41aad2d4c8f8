/**
 * `npm run bench:soak [-- --minutes 10 --calibrate 30 --lanes 16]`
 *
 * Mixed traffic on PostgreSQL with 2 API processes and 2 worker processes (`esig serve` ×2 with
 * ESIG_WORKERS=none, `esig worker` ×2), as docs/deployment.md scales out. One flow is what a user does:
 * upload a PDF, create a request (with an Idempotency-Key), add a signer and a field, send, find the
 * invitation (real SMTP server), sign through the signer API, list requests and events; the workers mail,
 * seal and deliver two webhooks per request to a real HTTPS receiver.
 *
 * First it calibrates: `--lanes` flows side by side for `--calibrate` seconds give the peak rate. Then it
 * paces flows at half of that peak for `--minutes`, and prints one row per minute: flows, API latency
 * p50/p99, errors, and the resident memory of each of the four processes. At the end it waits for every
 * request to be sealed and every webhook to arrive, and prints the memory trend (first full minute against
 * the last). A healthy run: zero errors, a flat p99, memory that levels off instead of climbing.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { makePdf } from '@esig/testkit/pdf';
import { startSmtpServer } from '@esig/testkit/smtp';
import { createKeyStandalone, loadConfig } from '@esig/server';
import { POSTGRES_URL_OPTION, startProcess, throwawayPostgres } from './lib.js';

const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '10' },
    calibrate: { type: 'string', default: '30' },
    lanes: { type: 'string', default: '16' },
    'postgres-url': POSTGRES_URL_OPTION,
  },
});
const MINUTES = Number(values.minutes);
const CALIBRATE_S = Number(values.calibrate);
const LANES = Number(values.lanes);
const root = new URL('..', import.meta.url).pathname;
const bin = `${root}examples/server/bin/esig.mjs`;

const rssMb = (pid: number | undefined): number => {
  if (pid === undefined) return NaN;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
};
const pct = (xs: readonly number[], p: number): number => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

const db = await throwawayPostgres(values['postgres-url']);
const smtp = await startSmtpServer();
const rx = await startHttpsReceiver();
const env: NodeJS.ProcessEnv = {
  ...process.env,
  ESIG_DATABASE_URL: db.url,
  ESIG_MASTER_KEY: randomBytes(32).toString('hex'),
  ESIG_PORT: '0',
  ESIG_HOST: '127.0.0.1',
  ESIG_LOG_LEVEL: 'error',
  ESIG_WORKERS: 'none',
  ESIG_TEST_SMTP_URL: smtp.url,
  ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
  ESIG_WEBHOOK_CA_FILE: rx.certFile,
  ESIG_RATE_LIMIT_KEY: '100000000',
  ESIG_RATE_LIMIT_ORG: '100000000',
  ESIG_PUBLIC_URL: 'http://esig.bench',
};
const listening = /esig: listening on http:\/\/[^:]+:(\d+)/;
const processes = await Promise.all([
  startProcess([bin, 'serve'], env, listening),
  startProcess([bin, 'serve'], env, listening),
  startProcess([bin, 'worker'], env, /esig: worker started/),
  startProcess([bin, 'worker'], env, /esig: worker started/),
]);
const [api1, api2] = processes;
const apis = [`http://127.0.0.1:${api1!.match[1]}`, `http://127.0.0.1:${api2!.match[1]}`];
const { secret: key } = await createKeyStandalone(loadConfig(env), { orgName: 'soak', mode: 'test', scopes: ['*'], name: 'soak' });

/** Every API call's latency, with when it ended; and every unexpected answer. */
const calls: Array<{ at: number; ms: number }> = [];
const errors: string[] = [];
const call = async (api: string, method: string, path: string, o: { body?: unknown; pdf?: Uint8Array; idem?: string; auth?: boolean; expect?: number } = {}) => {
  const started = performance.now();
  const res = await fetch(`${api}${path}`, {
    method,
    headers: {
      ...(o.auth === false ? {} : { authorization: `Bearer ${key}` }),
      'content-type': o.pdf ? 'application/pdf' : 'application/json',
      ...(o.idem ? { 'idempotency-key': o.idem } : {}),
    },
    body: o.pdf ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
  });
  const body = (await res.json()) as any;
  calls.push({ at: Date.now(), ms: performance.now() - started });
  if (res.status !== (o.expect ?? (method === 'POST' && !path.includes('/signing/') && !path.endsWith('/send') ? 201 : 200)))
    errors.push(`${method} ${path.replace(/[A-Za-z0-9]{43,}/, '{token}')}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
  return body;
};

await call(apis[0]!, 'POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/soak`, events: ['request.sent', 'request.completed'] } });
const pdf = await makePdf(2);
const requestIds: string[] = [];
let flowsDone = 0;

const waitFor = async <T>(probe: () => T | undefined, what: string, ms = 120_000): Promise<T> => {
  const until = Date.now() + ms;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`waited ${ms / 1000} s for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};

/**
 * The first message to each address (its invitation), indexed as messages arrive. A search of every message
 * at each 25 ms probe made each probe cost more as the run went on: in a 20-minute run the bench's own event
 * loop filled up after 13 minutes, and the flows, their latency as measured here, and the processes' load
 * changed at once for a reason that was the bench's.
 */
const firstTo = new Map<string, (typeof smtp.messages)[number]>();
let indexed = 0;
const firstMailTo = (email: string) => {
  for (; indexed < smtp.messages.length; indexed++) for (const to of smtp.messages[indexed]!.to) if (!firstTo.has(to)) firstTo.set(to, smtp.messages[indexed]!);
  return firstTo.get(email);
};

/** One user's flow, alternating the two API processes. */
const flow = async (i: number) => {
  const [a, b] = [apis[i % 2]!, apis[(i + 1) % 2]!];
  try {
    const doc = await call(a, 'POST', `/api/v1/documents?name=soak-${i}.pdf`, { pdf });
    const req = await call(b, 'POST', '/api/v1/signature-requests', { body: { title: `Soak ${i}`, documentIds: [doc.id] }, idem: `create-${i}` });
    requestIds.push(req.id);
    const email = `soak-${i}@example.com`;
    const rcp = await call(a, 'POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'Soak', lastName: String(i) } });
    await call(b, 'POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
    await call(a, 'POST', `/api/v1/signature-requests/${req.id}/send`, { body: {}, idem: `send-${i}` });
    const mail = await waitFor(() => firstMailTo(email), `the invitation to ${email}`);
    const token = /sign\/([A-Za-z0-9]{43,})/.exec(mail.text)![1]!;
    await call(b, 'GET', `/api/v1/signing/${token}`, { auth: false });
    await call(b, 'POST', `/api/v1/signing/${token}/sign`, { body: { values: {}, signature: { kind: 'typed', value: `Soak ${i}` } }, auth: false });
    await call(a, 'GET', '/api/v1/signature-requests?limit=20');
    await call(b, 'GET', '/api/v1/events?limit=20');
    flowsDone++;
  } catch (e) {
    errors.push(`flow ${i}: ${(e as Error).message}`);
  }
};

let next = 0;
// Calibration: LANES flows at a time, flat out.
process.stderr.write(`calibrating: ${LANES} concurrent flows for ${CALIBRATE_S} s…\n`);
const calibrationEnds = Date.now() + CALIBRATE_S * 1000;
await Promise.all(
  Array.from({ length: LANES }, async () => {
    while (Date.now() < calibrationEnds) await flow(next++);
  }),
);
const peak = flowsDone / CALIBRATE_S;
const rate = peak / 2;
process.stderr.write(`peak ${peak.toFixed(1)} flows/s (${(calls.length / CALIBRATE_S).toFixed(0)} API calls/s); soaking at ${rate.toFixed(1)} flows/s for ${MINUTES} min\n`);

// The soak: flows started at a steady pace (not as fast as answers come), so a slowdown shows as latency.
calls.length = 0;
flowsDone = 0;
const rows: Array<Record<string, string | number>> = [];
const NAMES = ['api1', 'api2', 'worker1', 'worker2'];
const soakStart = Date.now();
const inFlight = new Set<Promise<void>>();
let minute = 0;
let rowStart = soakStart;
let flowsAtRowStart = 0;
let errorsAtRowStart = errors.length;
const startedBefore = next;
while (Date.now() - soakStart < MINUTES * 60_000) {
  const due = startedBefore + Math.floor(((Date.now() - soakStart) / 1000) * rate);
  // A cap on flows in flight, so a stalled system shows as errors and latency, not as an unbounded pile.
  while (next < due && inFlight.size < 4 * LANES) {
    const p: Promise<void> = flow(next++).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }
  await new Promise((r) => setTimeout(r, 20));
  if (Date.now() - rowStart >= 60_000) {
    minute++;
    const window = calls.map((c) => c.ms);
    const row = {
      minute,
      flows: flowsDone - flowsAtRowStart,
      'api calls': window.length,
      'p50 ms': Number(pct(window, 50).toFixed(1)),
      'p99 ms': Number(pct(window, 99).toFixed(1)),
      errors: errors.length - errorsAtRowStart,
      ...Object.fromEntries(processes.map((p, i) => [`${NAMES[i]} MB`, Number(rssMb(p.child.pid).toFixed(0))])),
    };
    rows.push(row);
    console.log(JSON.stringify(row));
    rowStart = Date.now();
    flowsAtRowStart = flowsDone;
    errorsAtRowStart = errors.length;
    calls.length = 0;
  }
}
await Promise.all(inFlight);

// Drain: every request sealed, every webhook delivered.
process.stderr.write(`soak over; waiting for ${requestIds.length} requests to be sealed and their webhooks to arrive…\n`);
const completed = async () => {
  let n = 0;
  let cursor: string | null = null;
  do {
    const page: any = await call(apis[0]!, 'GET', `/api/v1/events?type=request.completed&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    n += page.data.length;
    cursor = page.pageInfo.nextCursor;
  } while (cursor);
  return n;
};
const drainUntil = Date.now() + 10 * 60_000;
while ((await completed()) < requestIds.length && Date.now() < drainUntil) await new Promise((r) => setTimeout(r, 1000));
const hooks = new Set(rx.requests.filter((r) => r.path === '/soak').map((r) => String(r.headers['esig-event-id'])));

console.table(rows);
const mem = (r: Record<string, string | number> | undefined) => NAMES.map((n) => Number(r?.[`${n} MB`]));
const [first, last] = [mem(rows[1] ?? rows[0]), mem(rows.at(-1))];
console.log(
  [
    `soak: ${MINUTES} min at ${rate.toFixed(1)} flows/s (half of the calibrated peak ${peak.toFixed(1)}), 2 API + 2 worker processes on PostgreSQL`,
    `requests: ${requestIds.length} created, ${await completed()} completed and sealed; webhooks: ${hooks.size} of ${requestIds.length * 2} events received`,
    `p99 by minute: ${rows.map((r) => r['p99 ms']).join(', ')} ms`,
    `memory, minute ${rows[1] ? 2 : 1} → ${rows.length} (MB): ${first.map((f, i) => `${NAMES[i]} ${f} → ${last[i]}`).join(', ')}`,
    `errors: ${errors.length}${errors.length ? `\n  ${errors.slice(0, 10).join('\n  ')}` : ''}`,
  ].join('\n'),
);

for (const p of processes) await p.stop();
await smtp.close();
await rx.close();
await db.drop();
process.exit(errors.length === 0 ? 0 : 1);
