/**
 * `npm run bench:sender [-- --requests 20000 --concurrency 16 --rounds 3 --server-root <checkout>]`
 *
 * The webhook sender alone (`@esig/webhook-https`), beside its baseline: bare keep-alive HTTPS POSTs from a
 * plain `https.Agent`, in the same process, to the same receiver (a process of its own), at the same
 * concurrency, with the same body and headers. Each round runs each client once, in turn; the figures are
 * the rate and the CPU time of this process per request (`process.cpuUsage`, which counts libuv's threads
 * too: the sender's name resolution runs there). The sender's extra work is what keeps a delivery safe: the
 * URL parsed, the name resolved (or its answer reused) and every address checked, a connection pool per
 * checked address set, one deadline per exchange, an excerpt of the answer kept.
 * `--server-root` adds the sender of another (built) checkout, to compare two versions in the same run.
 */
import { execFileSync, fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { WebhookSender } from '@esig/core';
import { createHttpsWebhookSender } from '@esig/webhook-https';
import { inLanes } from './lib.js';

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '20000' },
    concurrency: { type: 'string', default: '16' },
    rounds: { type: 'string', default: '3' },
    'server-root': { type: 'string' },
  },
});
const requests = Number(values.requests);
const concurrency = Number(values.concurrency);
const rounds = Number(values.rounds);

const dir = mkdtempSync(join(tmpdir(), 'esig-bench-sender-'));
const keyFile = join(dir, 'key.pem');
const certFile = join(dir, 'cert.pem');
execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
const cert = readFileSync(certFile);
const receiver = fork(new URL('./sender-receiver.mjs', import.meta.url).pathname, { env: { ...process.env, ESIG_BENCH_KEY: keyFile, ESIG_BENCH_CERT: certFile } });
const port = await new Promise<number>((resolve, reject) => {
  receiver.once('message', (m) => resolve((m as { port: number }).port));
  receiver.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
});

// An event body and the headers the core sends with it (the signature's length, not its value, matters here).
const body = JSON.stringify({ id: 'request.completed:req_01JD0000000000000000000000', type: 'request.completed', created: new Date().toISOString(), test_mode: true, data: { request_id: 'req_01JD0000000000000000000000', status: 'COMPLETED' } });
const headers = {
  'Esig-Signature': `t=1700000000,v1=${'0'.repeat(64)}`,
  'Esig-Event-Id': 'request.completed:req_01JD0000000000000000000000',
  'Esig-Event-Type': 'request.completed',
  'Esig-Delivery-Id': 'dlv_01JD0000000000000000000000',
  'Esig-Attempt': '1',
  'Esig-Timestamp': '1700000000',
};
const url = `https://localhost:${port}/hook`;

/** One POST; throws on anything but a 200. */
type Client = () => Promise<void>;

const bareClient = (): Client => {
  const agent = new Agent({ keepAlive: true, ca: cert });
  return () =>
    new Promise((resolve, reject) => {
      const req = httpsRequest(
        { method: 'POST', host: 'localhost', port, path: '/hook', agent, headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`bare: status ${res.statusCode}`))));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
};

const senderClient = (sender: WebhookSender): Client => async () => {
  const r = await sender.send({ url, body, headers, timeoutMs: 10_000 })();
  if (r._tag !== 'Answered' || r.status !== 200) throw new Error(`sender: ${r._tag === 'Answered' ? r.status : `${r.error}: ${r.detail}`}`);
};

const options = { allowHosts: ['127.0.0.1/32', 'localhost'], extraCa: cert };
const clients: Array<{ name: string; client: Client }> = [
  { name: 'bare keep-alive HTTPS POSTs (baseline)', client: bareClient() },
  { name: 'esig webhook sender', client: senderClient(createHttpsWebhookSender(options)) },
];
if (values['server-root'] !== undefined) {
  const other = (await import(join(values['server-root'], 'adapters/webhook-https/dist/index.js'))) as { createHttpsWebhookSender: typeof createHttpsWebhookSender };
  clients.push({ name: `esig webhook sender of ${values['server-root']}`, client: senderClient(other.createHttpsWebhookSender(options)) });
}

/** `count` requests, `concurrency` at a time: the rate, and this process's CPU µs per request. */
const run = async (client: Client, count: number) => {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await inLanes(count, concurrency, client);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  return { rate: count / seconds, cpuUs: (cpu.user + cpu.system) / count };
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

try {
  // Warmed up first, untimed: connections opened, code compiled.
  for (const { client } of clients) await run(client, Math.min(requests, 2_000));
  const figures = clients.map(() => ({ rates: [] as number[], cpus: [] as number[] }));
  for (let round = 0; round < rounds; round++)
    for (const [i, { client }] of clients.entries()) {
      const f = await run(client, requests);
      figures[i]!.rates.push(f.rate);
      figures[i]!.cpus.push(f.cpuUs);
    }

  console.log(`\nesig bench:sender — ${requests} requests × ${rounds} rounds, ${concurrency} at a time, HTTPS receiver on loopback (its own process)\n`);
  console.log(`${'client'.padEnd(60)}${'per s'.padStart(8)}   CPU µs per request (median; each round)`);
  for (const [i, { name }] of clients.entries()) {
    const f = figures[i]!;
    console.log(`${name.padEnd(60)}${String(Math.round(median(f.rates))).padStart(8)}   ${median(f.cpus).toFixed(1)} (${f.cpus.map((c) => c.toFixed(1)).join(', ')})`);
  }
  const [bare, ...senders] = figures;
  for (const [j, f] of senders.entries())
    console.log(
      `\n${clients[j + 1]!.name}: ${((100 * median(f.rates)) / median(bare!.rates)).toFixed(1)} % of the baseline's rate, ${Math.abs(median(f.cpus) - median(bare!.cpus)).toFixed(1)} µs of CPU per request ${median(f.cpus) >= median(bare!.cpus) ? 'more' : 'less'}`,
    );
} finally {
  receiver.kill();
  rmSync(dir, { recursive: true, force: true });
}
