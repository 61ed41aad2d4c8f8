import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '@esig/testkit/pdf';
import type { HttpsReceiver } from '@esig/testkit/https-receiver';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import type { TestSmtpServer } from '@esig/testkit/smtp';
import { startSmtpServer } from '@esig/testkit/smtp';
import { verifySignature } from '@esig/webhooks';
import { createKeyStandalone, loadConfig } from '../src/index.js';
import { createTestDatabase, postgresAvailable } from './pg.js';
import { startEsig } from './spawn.js';

const available = await postgresAvailable('the scale-out test (2 API and 2 worker processes on PostgreSQL)');
const REQUESTS = 200;
/** Job loops per worker process: how many jobs the killed worker can have had in flight when it died. */
const CONCURRENCY = 4;
/**
 * The test fails when the system stops making progress (no mail, no webhook POST, no request driven, no
 * request completed) for this long, not when it is slow: on a loaded shared machine the whole run can take
 * many minutes, and that is no failure. The test's own timeout is only the last-resort hang guard.
 */
const STALL_MS = 120_000;
const HANG_GUARD_MS = 30 * 60_000;

/** The JSON log lines a process printed. */
const logLines = (out: string): Array<Record<string, unknown>> =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe.skipIf(!available)('scale-out on PostgreSQL: 2 API processes, 2 workers, one killed', () => {
  const children: ChildProcess[] = [];
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let smtp: TestSmtpServer;
  let rx: HttpsReceiver;
  let env: NodeJS.ProcessEnv;

  const start = (args: string[], ready: RegExp) => startEsig(args, env, ready, children);

  beforeAll(async () => {
    db = await createTestDatabase('esig_scale');
    smtp = await startSmtpServer();
    rx = await startHttpsReceiver();
    env = {
      ...process.env,
      ESIG_DATABASE_URL: db.url,
      ESIG_MASTER_KEY: randomBytes(32).toString('hex'),
      ESIG_PORT: '0',
      ESIG_HOST: '127.0.0.1',
      ESIG_LOG_LEVEL: 'warn',
      ESIG_WORKERS: 'none',
      ESIG_TEST_SMTP_URL: smtp.url,
      ESIG_WORKER_POLL_MS: '100',
      ESIG_WORKER_LEASE_MS: '3000',
      ESIG_WORKER_CONCURRENCY: String(CONCURRENCY),
      ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
      ESIG_WEBHOOK_CA_FILE: rx.certFile,
      ESIG_WEBHOOK_RETRY_SCALE: '0.0001',
      ESIG_RATE_LIMIT_KEY: '1000000',
      ESIG_RATE_LIMIT_ORG: '1000000',
      ESIG_PUBLIC_URL: 'http://esig.test',
    };
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
    await smtp?.close();
    await rx?.close();
    await db?.drop();
  });

  it(`drives ${REQUESTS} requests to completion exactly once each, losing nothing`, async () => {
    // Migrations run once even though four processes start on the empty database together.
    const [api1, api2, w1, w2] = await Promise.all([
      start(['serve'], /esig: listening on http:\/\/[^:]+:(\d+)/),
      start(['serve'], /esig: listening on http:\/\/[^:]+:(\d+)/),
      start(['worker'], /esig: worker started/),
      start(['worker'], /esig: worker started/),
    ]);
    const workers = [w1, w2];
    const apis = [`http://127.0.0.1:${api1.match[1]}`, `http://127.0.0.1:${api2.match[1]}`];
    let completedCount = 0;
    const ids: string[] = [];
    const progress = () => smtp.messages.length + rx.requests.length + ids.length + completedCount;
    let lastProgress = progress();
    let lastChange = Date.now();
    /** Polls `probe` until it answers; fails only when nothing at all has moved for STALL_MS. */
    const whileProgressing = async <T>(probe: () => Promise<T | undefined> | T | undefined, what: string): Promise<T> => {
      for (;;) {
        const v = await probe();
        if (v !== undefined) return v;
        const p = progress();
        if (p !== lastProgress) [lastProgress, lastChange] = [p, Date.now()];
        else if (Date.now() - lastChange > STALL_MS) throw new Error(`no progress for ${STALL_MS / 1000} s while waiting for ${what}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    };
    const { secret: key } = await createKeyStandalone(loadConfig(env), { orgName: 'scale', mode: 'test', scopes: ['*'], name: 'scale' });
    const call = async (api: string, method: string, path: string, o: { body?: unknown; pdf?: Uint8Array; idem?: string } = {}) => {
      const res = await fetch(`${api}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': o.pdf ? 'application/pdf' : 'application/json',
          ...(o.idem ? { 'idempotency-key': o.idem } : {}),
        },
        body: o.pdf ?? (o.body === undefined ? undefined : JSON.stringify(o.body)),
      });
      return { status: res.status, replayed: res.headers.get('idempotency-replayed') === 'true', body: (await res.json()) as any };
    };

    const hook = await call(apis[0]!, 'POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/scale`, events: ['request.completed', 'request.sent'] } });
    expect(hook.status).toBe(201);
    const pdf = await makePdf(1);

    /** One request end to end, alternating APIs at every step, with retries and duplicates mixed in. */
    const drive = async (i: number) => {
      const a = apis[i % 2]!;
      const b = apis[(i + 1) % 2]!;
      const doc = (await call(a, 'POST', `/api/v1/documents?name=s${i}.pdf`, { pdf })).body;
      const created = await call(b, 'POST', '/api/v1/signature-requests', { body: { title: `Scale ${i}`, documentIds: [doc.id] }, idem: `create-${i}` });
      // An idempotent retry of the create through the other API replays it.
      const retried = await call(a, 'POST', '/api/v1/signature-requests', { body: { title: `Scale ${i}`, documentIds: [doc.id] }, idem: `create-${i}` });
      expect(retried.body.id ?? created.body.id).toBe(created.body.id);
      const req = created.body;
      const email = `signer-${i}@example.com`;
      const rcp = (await call(a, 'POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'S', lastName: String(i) } })).body;
      await call(b, 'POST', `/api/v1/signature-requests/${req.id}/fields`, { body: { documentId: doc.id, recipientId: rcp.id, type: 'signature', page: 1, x: 72, y: 600, width: 200, height: 50 } });
      // The same send through both APIs at once with one key, then a retry, then a send without a key.
      const sends = await Promise.all([a, b].map((api) => call(api, 'POST', `/api/v1/signature-requests/${req.id}/send`, { body: {}, idem: `send-${i}` })));
      expect(sends.filter((s) => s.status === 200).length).toBeGreaterThanOrEqual(1);
      for (const s of sends) expect([200, 409]).toContain(s.status);
      const again = await call(b, 'POST', `/api/v1/signature-requests/${req.id}/send`, { body: {}, idem: `send-${i}` });
      expect([200, 409]).toContain(again.status);
      expect((await call(a, 'POST', `/api/v1/signature-requests/${req.id}/send`, { body: {} })).status).toBe(409);

      const mail = await whileProgressing(() => smtp.messages.find((m) => m.to.includes(email) && /Please sign/.test(m.subject)), `the invitation to ${email}`);
      const token = /sign\/([A-Za-z0-9]{43,})/.exec(mail.text)![1]!;
      const signed = await fetch(`${b}/api/v1/signing/${token}/sign`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ values: {}, signature: { kind: 'typed', value: `Signer ${i}` } }) });
      expect(signed.status).toBe(200);
      return req.id as string;
    };

    let killed = false;
    const queue = Array.from({ length: REQUESTS }, (_, i) => i);
    const lanes = Array.from({ length: 16 }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
        ids.push(await drive(i));
        // Halfway through, one worker dies hard; a new one takes its place.
        if (!killed && ids.length >= REQUESTS / 2) {
          killed = true;
          w1.child.kill('SIGKILL');
          workers.push(await start(['worker'], /esig: worker started/));
        }
      }
    });
    await Promise.all(lanes);
    expect(new Set(ids).size).toBe(REQUESTS);

    // Wait for every request to be completed and sealed, and its event delivered.
    const events = async () => {
      const all: any[] = [];
      let cursor: string | null = null;
      do {
        const page: any = (await call(apis[0]!, 'GET', `/api/v1/events?type=request.completed&limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
        all.push(...page.data);
        cursor = page.pageInfo.nextCursor;
      } while (cursor);
      return all;
    };
    const completed = await whileProgressing(async () => {
      const all = await events();
      completedCount = all.length;
      return all.length >= REQUESTS ? all : undefined;
    }, `${REQUESTS} request.completed events`);
    expect(completed).toHaveLength(REQUESTS);
    expect(new Set(completed.map((e) => e.data.request_id))).toEqual(new Set(ids));
    expect(new Set(completed.map((e) => e.data.certificate.certificate_id)).size).toBe(REQUESTS);

    for (const id of ids.slice(0, 20)) {
      const r = (await call(apis[1]!, 'GET', `/api/v1/signature-requests/${id}`)).body;
      expect(r.status).toBe('COMPLETED');
      const cert = await fetch(`${apis[0]}/api/v1/signature-requests/${id}/certificate`, { headers: { authorization: `Bearer ${key}` } });
      expect(cert.status).toBe(200);
    }

    // One invitation per signer per send, whatever the duplicate sends and the killed worker did.
    const invitations = smtp.messages.filter((m) => /Please sign/.test(m.subject));
    const perSigner = new Map<string, number>();
    for (const m of invitations) for (const to of m.to) perSigner.set(to, (perSigner.get(to) ?? 0) + 1);
    expect(perSigner.size).toBe(REQUESTS);
    const repeatedMail = [...perSigner.values()].filter((c) => c > 1).length;
    // A repeat is the same job run again (same Message-ID), never a second invitation job.
    for (const [to, count] of perSigner)
      if (count > 1) expect(new Set(invitations.filter((m) => m.to.includes(to)).map((m) => m.messageId)).size, to).toBe(1);

    // Every event reached the endpoint, signed; repeats only where an attempt was recorded (or was in
    // flight in the killed worker, whose job loops could each hold one).
    const hookEvents = async () => new Set(rx.requests.filter((r) => r.path === '/scale').map((r) => String(r.headers['esig-event-id'])));
    await whileProgressing(async () => ((await hookEvents()).size >= REQUESTS * 2 ? true : undefined), `webhook POSTs for ${REQUESTS * 2} events`);
    const received = rx.requests.filter((r) => r.path === '/scale');
    const byEvent = new Map<string, number>();
    for (const r of received) byEvent.set(String(r.headers['esig-event-id']), (byEvent.get(String(r.headers['esig-event-id'])) ?? 0) + 1);
    for (const e of completed) expect(byEvent.get(e.id), e.id).toBeGreaterThanOrEqual(1);
    expect(byEvent.size).toBe(REQUESTS * 2);
    // Checked as the receiver would have when each arrived: on a loaded machine this run can outlast the
    // 300 s timestamp tolerance, and the first deliveries' timestamps are then that old by now.
    for (const r of received.slice(0, 50)) expect(verifySignature(r.raw, String(r.headers['esig-signature']), [hook.body.secret], { now: () => r.at })).toEqual({ ok: true, timestamp: expect.any(Number) });
    const attempts: any[] = [];
    let cursor: string | null = null;
    do {
      const page: any = (await call(apis[1]!, 'GET', `/api/v1/webhooks/deliveries?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`)).body;
      attempts.push(...page.data);
      cursor = page.pageInfo.nextCursor;
    } while (cursor);
    const successes = new Map<string, number>();
    for (const a of attempts) if (a.succeeded) successes.set(a.eventId, (successes.get(a.eventId) ?? 0) + 1);
    expect(successes.size).toBe(REQUESTS * 2);
    expect([...successes.values()].every((c) => c === 1)).toBe(true);
    const unrecorded = received.length - attempts.length;
    // What the workers said about leases: a live worker that lost one logs it (its heartbeat or its commit finds another holder).
    const leaseLosses = workers.map((w) => logLines(w.out()).filter((l) => String(l.msg).startsWith('job lease lost')));
    const slowBeats = workers.map((w) => logLines(w.out()).filter((l) => String(l.msg).startsWith('job heartbeat slow')));
    console.info(
      `scale-out: lease losses logged by w1 (killed later), w2, w3: ${leaseLosses.map((l) => l.length).join(', ')}; slow heartbeats: ${slowBeats.map((b) => b.length).join(', ')}`,
      slowBeats.flat().slice(0, 10),
      leaseLosses.flat().slice(0, 5),
    );
    console.info(
      `scale-out: ${REQUESTS} requests, ${received.length} webhook POSTs for ${byEvent.size} events (${attempts.length} recorded attempts, ${unrecorded} unrecorded), ${invitations.length} invitations (${repeatedMail} repeated)`,
    );
    expect(unrecorded).toBeGreaterThanOrEqual(0);
    // Live workers renew their leases while a job runs, so however slow the machine, no job is run twice
    // by them, and a mail whose outcome commit failed is not sent again (the acceptance is noted first).
    // Only the SIGKILLed worker can leave a repeat behind: each of its job loops can have had one job in
    // flight, a webhook POST the receiver got but no attempt recorded, or a mail accepted by the server a
    // moment before the worker died and before the acceptance was noted. So at most one per loop.
    expect(unrecorded + repeatedMail).toBeLessThanOrEqual(CONCURRENCY);
  }, HANG_GUARD_MS);
});
