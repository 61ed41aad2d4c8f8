/**
 * The bare baseline of bench:webhooks, in a process of its own: a plain keep-alive client (`https.Agent`,
 * connections reused) POSTing a signed event body to `ESIG_BARE_TARGET` (HTTPS, its certificate in
 * `ESIG_BARE_CA`), `ESIG_BARE_CONCURRENCY` at a time: `ESIG_BARE_WARMUP` POSTs untimed, then `ESIG_BARE_COUNT`
 * timed. It prints `bare: <POSTs a second> <ms of its CPU per POST>` and exits.
 *
 * Its own process, as esig's workers and the direct baseline have theirs: run in the bench's process, the client
 * shared one thread with the receiver, which then did the work of both ends of every exchange, and the baseline
 * ran at 46–81 % of what the same client reaches from a process of its own (docs/performance.md,
 * webhooks' fourteenth round). None of esig's code: the signature is made as the direct baseline makes it.
 */
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:https';
import { performance } from 'node:perf_hooks';
import { inLanes } from './lib.js';

const target = new URL(process.env.ESIG_BARE_TARGET ?? '');
const agent = new Agent({ keepAlive: true, ca: readFileSync(process.env.ESIG_BARE_CA ?? '') });
const warmup = Number(process.env.ESIG_BARE_WARMUP ?? '5000');
const count = Number(process.env.ESIG_BARE_COUNT ?? '8000');
const concurrency = Number(process.env.ESIG_BARE_CONCURRENCY ?? '16');

const body = JSON.stringify({ id: 'evt_bench', type: 'document.created', created: new Date().toISOString(), test_mode: true, data: {} });
/** Signed per POST, as esig and the direct baseline sign each delivery. */
const sign = () => {
  const t = Math.floor(Date.now() / 1000);
  return `t=${t},v1=${createHmac('sha256', 'whsec_bare').update(`${t}.${body}`).digest('hex')}`;
};

const post = () =>
  new Promise<void>((resolve, reject) => {
    const req = request(
      {
        method: 'POST',
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'esig-signature': sign() },
      },
      (res) => {
        res.resume();
        res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`bare: status ${res.statusCode}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });

/** `n` POSTs, `concurrency` at a time. */
const posts = (n: number): Promise<void> => inLanes(n, concurrency, post);

await posts(warmup);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
await posts(count);
const seconds = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
agent.destroy();
process.stdout.write(`bare: ${(count / seconds).toFixed(1)} ${((cpu.user + cpu.system) / 1000 / count).toFixed(4)}\n`);
