import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import type { HttpsReceiver } from '@esig/testkit/https-receiver';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import type { TestSmtpServer } from '@esig/testkit/smtp';
import { startSmtpServer } from '@esig/testkit/smtp';
import { startEsig } from './spawn.js';

const dir = mkdtempSync(join(tmpdir(), 'esig-crash-'));
const children: ChildProcess[] = [];
let smtp: TestSmtpServer;
let rx: HttpsReceiver | undefined;
afterAll(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await smtp?.close();
  await rx?.close();
  rmSync(dir, { recursive: true, force: true });
});

const start = (args: string[], env: NodeJS.ProcessEnv, ready: RegExp) => startEsig(args, env, ready, children);

/**
 * Every wait in these tests is for a condition; the one time bound is each test's timeout, a hang guard far
 * above any slow run (a shared 2-core machine under load can take minutes), so slowness is never a failure.
 */
const TEST_MS = 10 * 60_000;
let finished = false;
afterAll(() => {
  finished = true;
});

/** Polls `probe` until it answers; gives up only when the test is over (its timeout), so a load spike is waited out. */
const until = async <T>(probe: () => Promise<T | undefined>, what: string): Promise<T> => {
  for (;;) {
    if (finished) throw new Error(`gave up waiting for ${what}`);
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 25));
  }
};

/** The JSON log lines a process printed. */
const logLines = (out: string): Array<Record<string, unknown>> =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('a worker killed in the middle of completion', () => {
  it('completes the request exactly once after a restart: one certificate, one request.completed', async () => {
    smtp = await startSmtpServer();
    const env = {
      ...process.env,
      ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`,
      ESIG_PORT: '0',
      ESIG_HOST: '127.0.0.1',
      ESIG_LOG_LEVEL: 'info',
      ESIG_WORKERS: 'none',
      ESIG_TEST_SMTP_URL: smtp.url,
      ESIG_WORKER_POLL_MS: '20',
      ESIG_WORKER_LEASE_MS: '1500',
      ESIG_PUBLIC_URL: 'http://esig.test',
    };
    const api = await start(['serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/);
    const url = `http://127.0.0.1:${api.match[1]}`;
    const key = /(esig_test_[A-Za-z0-9]{32})/.exec(api.out())![1]!;
    const call = async (method: string, path: string, body?: unknown, raw?: Uint8Array) => {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, 'content-type': raw ? 'application/pdf' : 'application/json' },
        body: raw ?? (body === undefined ? undefined : JSON.stringify(body)),
      });
      return { status: res.status, body: ((res.headers.get('content-type') ?? '').includes('json') ? await res.json() : null) as any };
    };

    // A large document makes sealing take long enough to be interrupted.
    const doc = (await call('POST', '/api/v1/documents?name=big.pdf', undefined, await makePdf(150))).body;
    const req = (await call('POST', '/api/v1/signature-requests', { title: 'Crash test', documentIds: [doc.id] })).body;
    const rcp = (await call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { email: 'crash@example.com', firstName: 'C', lastName: 'T' })).body;
    await call('POST', `/api/v1/signature-requests/${req.id}/fields`, { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 150, x: 72, y: 600, width: 200, height: 50 });
    expect((await call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);

    let worker = await start(['worker'], env, /esig: worker started/);
    const invite = await smtp.waitFor((m) => m.to.includes('crash@example.com'), TEST_MS);
    const token = /sign\/([A-Za-z0-9]{43,})/.exec(invite.text)![1]!;
    const signed = await fetch(`${url}/api/v1/signing/${token}/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: {}, signature: { kind: 'typed', value: 'Crash Tester' } }) });
    expect(((await signed.json()) as { everyoneSigned: boolean }).everyoneSigned).toBe(true);

    // Wait until the worker holds the seal job's lease (it is rendering), then kill it hard.
    const db = new Database(join(dir, 'esig.db'), { readonly: true });
    const sealJob = () => db.prepare("SELECT attempts, locked_by FROM jobs WHERE kind = 'seal.complete' AND json_extract(payload, '$.requestId') = ?").get(req.id) as { attempts: number; locked_by: string | null } | undefined;
    await until(async () => (sealJob()?.locked_by ? true : undefined), 'the worker to claim the seal job');
    worker.child.kill('SIGKILL');
    await new Promise((r) => worker.child.once('exit', r));
    expect(logLines(worker.out()).filter((l) => l.kind === 'seal.complete' && l.msg === 'job done')).toEqual([]);
    // Killed mid-completion: still SENT (COMPLETED waits for the evidence), no PDF and no event yet.
    expect((await call('GET', `/api/v1/signature-requests/${req.id}`)).body).toMatchObject({ status: 'SENT', certificateId: null, recipients: [{ status: 'SIGNED' }] });
    expect((await call('GET', `/api/v1/signature-requests/${req.id}/document`)).status).toBe(409);
    const before = (await call('GET', '/api/v1/events?type=request.completed&limit=100')).body.data;
    expect(before).toHaveLength(0);

    expect(sealJob()).toMatchObject({ attempts: 1, locked_by: expect.any(String) });

    // Two replacement workers race for the job once the dead worker's lease runs out.
    worker = await start(['worker'], env, /esig: worker started/);
    const second = await start(['worker'], env, /esig: worker started/);
    await until(async () => ((await call('GET', `/api/v1/signature-requests/${req.id}/document`)).status === 200 ? true : undefined), 'sealing after restart');
    // The job was taken over after the lease ran out and then finished (removed from the queue).
    await until(async () => (sealJob() === undefined ? true : undefined), 'the seal job to be removed');

    const events = (await call('GET', '/api/v1/events?type=request.completed&limit=100')).body.data;
    expect(events).toHaveLength(1);
    expect(events[0].id).toBe(`request.completed:${req.id}`);
    const final = (await call('GET', `/api/v1/signature-requests/${req.id}`)).body;
    expect(final.certificateId).toMatch(/^coc_/);
    expect(events[0].data.certificate.certificate_id).toBe(final.certificateId);
    const cert = await call('GET', `/api/v1/signature-requests/${req.id}/certificate`);
    expect(cert.status).toBe(200);
    // One completed notice per recipient, however often the job ran: counted once its job is done (removed).
    const noticeJobs = () => db.prepare("SELECT count(*) AS n FROM jobs WHERE kind = 'mail.completed'").get() as { n: number };
    await until(async () => (noticeJobs().n === 0 && smtp.messages.some((m) => /Completed/.test(m.subject)) ? true : undefined), 'the completed notice');
    db.close();
    expect(smtp.messages.filter((m) => /Completed/.test(m.subject))).toHaveLength(1);
    for (const c of [worker.child, second.child, api.child]) c.kill('SIGTERM');
  }, TEST_MS);
});

describe('a worker killed with SIGKILL in the middle of a webhook delivery', () => {
  it('loses nothing: a new worker delivers the same event and delivery once the lease runs out', async () => {
    rx = await startHttpsReceiver();
    const env = {
      ...process.env,
      ESIG_DATABASE_URL: `sqlite:${join(dir, 'webhooks.db')}`,
      ESIG_PORT: '0',
      ESIG_HOST: '127.0.0.1',
      ESIG_WORKERS: 'none',
      ESIG_WORKER_POLL_MS: '20',
      ESIG_WORKER_LEASE_MS: '1500',
      ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
      ESIG_WEBHOOK_CA_FILE: rx.certFile,
    };
    const api = await start(['serve'], env, /esig: listening on http:\/\/[^:]+:(\d+)/);
    const url = `http://127.0.0.1:${api.match[1]}`;
    const key = /(esig_test_[A-Za-z0-9]{32})/.exec(api.out())![1]!;
    const auth = { authorization: `Bearer ${key}` };
    const created = await fetch(`${url}/api/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${rx.url}/killed`, events: ['document.created'] }),
    });
    expect(created.status).toBe(201);
    // The first request is held open until the worker is dead; the next one is answered.
    rx.answer('/killed', { hang: true }, { status: 200, body: 'thanks' });

    let worker = await start(['worker'], env, /esig: worker started/);
    await fetch(`${url}/api/v1/documents?name=k.pdf`, { method: 'POST', headers: { ...auth, 'content-type': 'application/pdf' }, body: await makePdf(1) });
    const [first] = await rx.waitFor((r) => r.path === '/killed', 1, TEST_MS);
    worker.child.kill('SIGKILL');
    await new Promise((r) => worker.child.once('exit', r));

    worker = await start(['worker'], env, /esig: worker started/);
    const [, second] = await rx.waitFor((r) => r.path === '/killed', 2, TEST_MS);
    expect(second!.headers['esig-event-id']).toBe(first!.headers['esig-event-id']);
    expect(second!.headers['esig-delivery-id']).toBe(first!.headers['esig-delivery-id']);
    expect(second!.raw.equals(first!.raw)).toBe(true);
    const log = await until(async () => {
      const res = await fetch(`${url}/api/v1/webhooks/deliveries?order=asc`, { headers: auth });
      const body = (await res.json()) as { data: Array<{ succeeded: boolean; status: string }> };
      return body.data.some((a) => a.succeeded) ? body.data : undefined;
    }, 'the successful attempt in the log');
    // The killed attempt left no record; the one that counted is logged once, as a success.
    expect(log.filter((a) => a.succeeded)).toHaveLength(1);
    expect(log.find((a) => a.succeeded)!.status).toBe('200');
    for (const c of [worker.child, api.child]) c.kill('SIGTERM');
  }, TEST_MS);
});
