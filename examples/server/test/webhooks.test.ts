import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Stores } from '@esig/core';
import { ok } from '@esig/testkit';
import type { HttpsReceiver } from '@esig/testkit/https-receiver';
import { startHttpsReceiver } from '@esig/testkit/https-receiver';
import { verifySignature } from '@esig/webhooks';
import { T } from '../src/tokens.js';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
let rx: HttpsReceiver;
beforeAll(async () => {
  rx = await startHttpsReceiver();
  s = await startTestServer({
    ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
    ESIG_WEBHOOK_CA_FILE: rx.certFile,
    // 1 min → 3 ms … 8 h → 1.4 s: the whole schedule in a few seconds.
    ESIG_WEBHOOK_RETRY_SCALE: '0.00005',
    ESIG_WORKER_POLL_MS: '20',
  });
});
afterAll(async () => {
  await s?.close();
  await rx?.close();
});

let n = 0;
/** An endpoint on its own receiver path, subscribed to document.created unless told otherwise. */
const endpoint = async (events: string[] = ['document.created'], key?: string) => {
  const path = `/hook-${++n}`;
  const r = await s.call('POST', '/api/v1/webhooks/endpoints', { key, body: { url: `${rx.url}${path}`, events, description: `test ${n}` } });
  expect(r.status, r.text).toBe(201);
  return { ...r.body, path, secret: r.body.secret as string };
};
const hits = (path: string) => rx.requests.filter((r) => r.path === path);
const deliveriesOf = async (endpointId: string) => (await s.call('GET', `/api/v1/webhooks/deliveries?endpointId=${endpointId}&order=asc&limit=100`)).body.data as any[];
const until = async <T>(probe: () => Promise<T | undefined>, what: string, ms = 20_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
};
/**
 * Resolves once no job is left that could still call the endpoint: no fan-out waits to run (it could create a
 * delivery to it), and no delivery to it has an attempt, or a retry, still to come. A hit that has not arrived
 * by then never will, however slow the machine: every attempt is a job's, and a job ends only after its POST.
 */
const settled = (endpointId: string) =>
  until(async () => {
    const stores = s.container.resolve<Stores>(T.Stores);
    for (const job of await ok(stores.jobs.list({ kinds: ['webhook.dispatch', 'webhook.deliver'], limit: 10_000 }))) {
      // A buried job is never run again (nobody revives one here).
      if (job.buried) continue;
      if (job.kind === 'webhook.dispatch') return undefined;
      if (job.kind === 'webhook.deliver' && (await ok(stores.webhookDeliveries.findById({ orgId: job.orgId, mode: job.mode }, job.payload.deliveryId)))?.endpointId === endpointId)
        return undefined;
    }
    return true;
  }, `the last job that could call ${endpointId}`);

describe('webhook endpoints', () => {
  it('shows the secret once, stores it encrypted, and lists endpoints without it', async () => {
    const e = await endpoint(['request.completed', 'invoice.created']);
    expect(e.secret).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
    expect(e).toMatchObject({ events: ['request.completed', 'invoice.created'], enabled: true, testMode: true });
    const list = await s.call('GET', '/api/v1/webhooks/endpoints?limit=100');
    expect(list.text).not.toContain(e.secret);
    expect((await s.call('GET', `/api/v1/webhooks/endpoints/${e.id}`)).text).not.toContain('whsec_');
    const files = ['esig.db', 'esig.db-wal'].map((f) => { try { return readFileSync(join(s.dir, f)); } catch { return Buffer.alloc(0); } });
    expect(Buffer.concat(files).includes(Buffer.from(e.secret))).toBe(false);
  });

  it.each([
    ['an unknown event type', { url: 'https://localhost:1/x', events: ['request.exploded'] }],
    ['no event types', { url: 'https://localhost:1/x', events: [] }],
    ['plain http', { url: 'http://localhost:1/x', events: ['document.created'] }],
    ['credentials in the URL', { url: 'https://user:pw@localhost:1/x', events: ['document.created'] }],
    ['a private address', { url: 'https://10.1.2.3/x', events: ['document.created'] }],
    ['the metadata address', { url: 'https://169.254.169.254/latest', events: ['document.created'] }],
  ])('refuses %s with 400 and stores nothing', async (_n, body) => {
    const before = (await s.call('GET', '/api/v1/webhooks/endpoints?limit=100')).body.data.length;
    const r = await s.call('POST', '/api/v1/webhooks/endpoints', { body });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect((await s.call('GET', '/api/v1/webhooks/endpoints?limit=100')).body.data.length).toBe(before);
  });

  it('refuses a URL whose host does not resolve without the resolver’s own words, on create and on update', async () => {
    const body = { url: 'https://nosuch.invalid/x', events: ['document.created'] };
    const created = await s.call('POST', '/api/v1/webhooks/endpoints', { body });
    expect(created.status).toBe(400);
    expect(created.body).toMatchObject({ code: 'validation_failed', detail: 'url: nosuch.invalid did not resolve to any address', errors: [{ path: 'url', message: 'nosuch.invalid did not resolve to any address' }] });
    const e = await endpoint();
    const updated = await s.call('PATCH', `/api/v1/webhooks/endpoints/${e.id}`, { body: { url: body.url } });
    expect(updated.status).toBe(400);
    expect(updated.body.detail).toBe('url: nosuch.invalid did not resolve to any address');
    expect(created.text + updated.text).not.toMatch(/getaddrinfo|ENOTFOUND|EAI_/);
  });

  it('needs webhooks:write to create and webhooks:read to list', async () => {
    const reader = await s.newKey('default', 'test', ['webhooks:read']);
    expect((await s.call('POST', '/api/v1/webhooks/endpoints', { key: reader, body: { url: `${rx.url}/x`, events: ['document.created'] } })).status).toBe(403);
    expect((await s.call('GET', '/api/v1/webhooks/endpoints', { key: reader })).status).toBe(200);
  });
});

describe('deliveries', () => {
  it('POSTs the spec body with Esig- headers and a signature over the raw bytes', async () => {
    const e = await endpoint(['document.created']);
    const doc = await s.uploadPdf('hooked.pdf', 1);
    const [req] = await rx.waitFor((r) => r.path === e.path);
    const raw = req!.raw;
    const body = JSON.parse(raw.toString('utf8'));
    expect(Object.keys(body)).toEqual(['id', 'type', 'created', 'test_mode', 'data']);
    expect(body).toMatchObject({ type: 'document.created', test_mode: true, data: { document_id: doc.id, page_count: 1 } });
    expect(body.created).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(req!.headers['content-type']).toBe('application/json');
    expect(req!.headers['user-agent']).toMatch(/esig/);
    expect(req!.headers['esig-event-id']).toBe(body.id);
    expect(req!.headers['esig-event-type']).toBe('document.created');
    expect(req!.headers['esig-delivery-id']).toMatch(/^dlv_/);
    expect(req!.headers['esig-attempt']).toBe('1');
    const sig = String(req!.headers['esig-signature']);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(req!.headers['esig-timestamp']).toBe(/^t=(\d+)/.exec(sig)![1]);
    expect(verifySignature(raw, sig, [e.secret])).toMatchObject({ ok: true });
    // Re-serialized JSON is not what was signed.
    expect(verifySignature(JSON.stringify(body, null, 1), sig, [e.secret])).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(verifySignature(raw, sig, ['whsec_wrong'])).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it.each([
    ['500', { status: 500, body: 'boom' }],
    ['429 with Retry-After', { status: 429, headers: { 'retry-after': '0' } }],
    ['408', { status: 408 }],
    ['425', { status: 425 }],
    ['a redirect (never followed)', { status: 302, headers: { location: '/elsewhere' } }],
  ])('retries after %s, keeping the event and delivery ids', async (_n, first) => {
    const e = await endpoint();
    rx.answer(e.path, first, { status: 200, body: 'ok' });
    await s.uploadPdf('retry.pdf', 1);
    const [a, b] = await rx.waitFor((r) => r.path === e.path, 2);
    expect(a!.headers['esig-attempt']).toBe('1');
    expect(b!.headers['esig-attempt']).toBe('2');
    expect(b!.headers['esig-event-id']).toBe(a!.headers['esig-event-id']);
    expect(b!.headers['esig-delivery-id']).toBe(a!.headers['esig-delivery-id']);
    expect(b!.raw.equals(a!.raw)).toBe(true);
    expect(hits('/elsewhere')).toHaveLength(0);
    const log = await until(async () => {
      const d = await deliveriesOf(e.id);
      return d.length === 2 ? d : undefined;
    }, 'two log entries');
    expect(log.map((x) => [x.attempt, x.succeeded])).toEqual([[1, false], [2, true]]);
    expect(log[0].status).toBe(String((first as { status: number }).status));
  });

  it('counts a receiver that does not answer within 10 s as a failure and retries', async () => {
    const e = await endpoint();
    rx.answer(e.path, { hang: true }, { status: 204 });
    await s.uploadPdf('slow.pdf', 1);
    await rx.waitFor((r) => r.path === e.path, 2, 25_000);
    const log = await until(async () => {
      const d = await deliveriesOf(e.id);
      return d.length === 2 ? d : undefined;
    }, 'two log entries');
    expect(log[0]).toMatchObject({ attempt: 1, status: 'timeout', succeeded: false });
    expect(log[0].durationMs).toBeGreaterThanOrEqual(9_900);
    expect(log[1]).toMatchObject({ attempt: 2, status: '204', succeeded: true });
  }, 40_000);

  it.each([400, 404, 410])('does not retry a %i', async (status) => {
    const e = await endpoint();
    rx.answer(e.path, { status, body: 'x'.repeat(3000) });
    await s.uploadPdf('final.pdf', 1);
    await rx.waitFor((r) => r.path === e.path);
    const log = await until(async () => {
      const d = await deliveriesOf(e.id);
      return d.length === 1 ? d : undefined;
    }, 'the log entry');
    await settled(e.id);
    expect(hits(e.path)).toHaveLength(1);
    expect(log[0]).toMatchObject({ attempt: 1, status: String(status), succeeded: false });
    expect(log[0].responseBody).toHaveLength(1024);
  });

  it('stops after 8 attempts in all', async () => {
    const e = await endpoint();
    rx.answer(e.path, { status: 503 });
    await s.uploadPdf('eight.pdf', 1);
    await rx.waitFor((r) => r.path === e.path, 8, 30_000);
    await settled(e.id);
    expect(hits(e.path).map((r) => r.headers['esig-attempt'])).toEqual(['1', '2', '3', '4', '5', '6', '7', '8']);
  }, 40_000);

  it('sends test events only to test endpoints and live events only to live ones', async () => {
    const live = await s.newKey('default', 'live');
    const liveEndpoint = await endpoint(['document.created'], live);
    expect(liveEndpoint.testMode).toBe(false);
    const testEndpoint = await endpoint(['document.created']);
    await s.uploadPdf('mode.pdf', 1);
    await rx.waitFor((r) => r.path === testEndpoint.path);
    await settled(liveEndpoint.id);
    expect(hits(liveEndpoint.path)).toHaveLength(0);
    await s.uploadPdf('live.pdf', 1, live);
    const [liveHit] = await rx.waitFor((r) => r.path === liveEndpoint.path);
    expect(JSON.parse(liveHit!.raw.toString()).test_mode).toBe(false);
  });
});

describe('endpoint health, rotation, resend, logs', () => {
  it('disables an endpoint after 5 final failures in a row, cancels its waiting deliveries, and resumes when re-enabled', async () => {
    const e = await endpoint(['document.created']);
    rx.answer(e.path, { status: 410 });
    for (let i = 0; i < 5; i++) await s.uploadPdf(`gone-${i}.pdf`, 1);
    const disabled = await until(async () => {
      const r = (await s.call('GET', `/api/v1/webhooks/endpoints/${e.id}`)).body;
      return r.enabled === false ? r : undefined;
    }, 'the endpoint to be disabled');
    expect(disabled.disabledReason).toMatch(/5 deliveries in a row failed/);
    const count = hits(e.path).length;
    await s.uploadPdf('after-disable.pdf', 1);
    await settled(e.id);
    expect(hits(e.path)).toHaveLength(count);

    rx.answer(e.path, { status: 200 });
    const enabled = await s.call('PATCH', `/api/v1/webhooks/endpoints/${e.id}`, { body: { enabled: true } });
    expect(enabled.body).toMatchObject({ enabled: true, disabledReason: null });
    await s.uploadPdf('after-enable.pdf', 1);
    await rx.waitFor((r) => r.path === e.path, count + 1);
  }, 30_000);

  it('cancels waiting deliveries when an endpoint is disabled through the API', async () => {
    const e = await endpoint(['document.created']);
    rx.answer(e.path, { status: 500 });
    await s.uploadPdf('pending.pdf', 1);
    await rx.waitFor((r) => r.path === e.path);
    const disabled = await s.call('PATCH', `/api/v1/webhooks/endpoints/${e.id}`, { body: { enabled: false } });
    expect(disabled.body).toMatchObject({ enabled: false, disabledReason: 'disabled through the API' });
    // An attempt already in flight may still land (one at most: a delivery has one job at a time); after that,
    // the cancelled delivery is never tried again (its retries would otherwise keep coming every few hundred
    // ms at this retry scale, for seconds: all of them would land before its last job ended).
    const atDisable = hits(e.path).length;
    await settled(e.id);
    const landed = hits(e.path).length;
    expect(landed).toBeLessThanOrEqual(atDisable + 1);
    await new Promise((r) => setTimeout(r, 2000));
    expect(hits(e.path)).toHaveLength(landed);
  });

  it('rotates the secret: both signatures during the overlap, the new one first', async () => {
    const e = await endpoint(['document.created']);
    const rotated = await s.call('POST', `/api/v1/webhooks/endpoints/${e.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).toMatch(/^whsec_/);
    expect(rotated.body.secret).not.toBe(e.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);
    await s.uploadPdf('rotated.pdf', 1);
    const [req] = await rx.waitFor((r) => r.path === e.path);
    const sig = String(req!.headers['esig-signature']);
    expect(sig).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    expect(verifySignature(req!.raw, sig, [rotated.body.secret])).toMatchObject({ ok: true });
    expect(verifySignature(req!.raw, sig, [e.secret])).toMatchObject({ ok: true });
    const [, newest] = /v1=([0-9a-f]{64})/.exec(sig)!;
    const onlyNew = `${sig.split(',')[0]},v1=${newest}`;
    expect(verifySignature(req!.raw, onlyNew, [rotated.body.secret])).toMatchObject({ ok: true });
  });

  it('sends a test event, resends from the log with a new id and redelivery_of, and logs webhook calls', async () => {
    const e = await endpoint(['document.created']);
    const test = await s.call('POST', `/api/v1/webhooks/endpoints/${e.id}/test`);
    expect(test.status).toBe(202);
    const [ping] = await rx.waitFor((r) => r.path === e.path);
    expect(JSON.parse(ping!.raw.toString()).type).toBe('webhook.test');

    await s.uploadPdf('resend.pdf', 1);
    const [original] = await rx.waitFor((r) => r.path === e.path && r.headers['esig-event-type'] === 'document.created');
    const originalBody = JSON.parse(original!.raw.toString());
    const resent = await s.call('POST', `/api/v1/webhooks/deliveries/${original!.headers['esig-delivery-id']}/resend`);
    expect(resent.status).toBe(202);
    const [again] = await rx.waitFor((r) => r.path === e.path && JSON.parse(r.raw.toString()).redelivery_of === originalBody.id);
    const againBody = JSON.parse(again!.raw.toString());
    expect(againBody.id).not.toBe(originalBody.id);
    expect(Object.keys(againBody)).toEqual(['id', 'type', 'created', 'test_mode', 'data', 'redelivery_of']);
    expect(againBody.data).toEqual(originalBody.data);
    expect(again!.headers['esig-delivery-id']).not.toBe(original!.headers['esig-delivery-id']);

    const byEvent = await s.call('GET', `/api/v1/webhooks/deliveries?eventId=${originalBody.id}`);
    expect(byEvent.body.data.every((a: any) => a.eventId === originalBody.id)).toBe(true);
    // The id a log entry shows is its attempt's (a dlv_ id too): resending by it resends that entry's delivery.
    // This endpoint's entry: other endpoints of the org (earlier tests') may have had the event too.
    const entry = (await s.call('GET', `/api/v1/webhooks/deliveries?eventId=${originalBody.id}&endpointId=${e.id}`)).body.data[0];
    expect(entry.endpointId).toBe(e.id);
    expect(entry.id).not.toBe(entry.deliveryId);
    const byEntry = await s.call('POST', `/api/v1/webhooks/deliveries/${entry.id}/resend`);
    expect(byEntry.status).toBe(202);
    const bodies = await rx.waitFor((r) => r.path === e.path && JSON.parse(r.raw.toString()).redelivery_of === originalBody.id, 2);
    expect(bodies).toHaveLength(2);
    // Another tenant's entry is not found.
    const stranger = await s.call('POST', `/api/v1/webhooks/deliveries/${entry.id}/resend`, { key: await s.newKey('resend-stranger', 'test') });
    expect(stranger.status).toBe(404);
    const logs = await until(async () => {
      const l = (await s.call('GET', '/api/v1/logs?kind=webhook&limit=100')).body.data;
      return l.some((x: any) => x.target === `${rx.url}${e.path}`) ? l : undefined;
    }, 'webhook calls in the request log');
    expect(logs.find((x: any) => x.target === `${rx.url}${e.path}`)).toMatchObject({ kind: 'webhook', method: 'POST', status: 200 });
    const api = (await s.call('GET', '/api/v1/logs?kind=api&limit=5')).body.data;
    expect(api[0]).toMatchObject({ kind: 'api', method: expect.any(String), target: expect.stringMatching(/^\/api\/v1\//) });
  });
});

describe('webhook deliveries on loops of their own', () => {
  // One loop for each worker: a delivery stuck on a receiver that does not answer occupies the only webhook
  // loop, and the signer's invitation must still go out on the other worker's loop meanwhile.
  let own: TestServer;
  afterAll(async () => own?.close());

  it('a delivery waiting on a receiver that does not answer holds back no mail', async () => {
    own = await startTestServer({
      ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
      ESIG_WEBHOOK_CA_FILE: rx.certFile,
      ESIG_WORKER_POLL_MS: '20',
      ESIG_WORKER_CONCURRENCY: '1',
      ESIG_WEBHOOK_CONCURRENCY: '1',
    });
    const made = await own.call('POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/hang-own`, events: ['document.created'] } });
    expect(made.status, made.text).toBe(201);
    rx.answer('/hang-own', { hang: true });
    const { req, rcp } = await own.draftReady();
    await rx.waitFor((r) => r.path === '/hang-own');
    expect((await own.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
    await until(async () => {
      const mails = (await own.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(rcp.email)}&limit=10`)).body.data as Array<{ subject: string }>;
      return mails.some((m) => /Please sign/.test(m.subject)) ? true : undefined;
    }, 'the invitation');
    // The invitation went out while the delivery was still waiting on its receiver: no attempt logged yet.
    const log = (await own.call('GET', `/api/v1/webhooks/deliveries?endpointId=${made.body.id}&limit=10`)).body.data as unknown[];
    expect(log).toEqual([]);
  }, 30_000);

  // Four webhook loops, so a slow endpoint's share is one. Nine deliveries to a receiver that never answers
  // fall due before one to another endpoint. The first four take every loop (nothing is known to be slow
  // yet) and time out after 10 s; from then on the slow endpoint holds one loop, and its other deliveries are
  // put off. Without the gate, the next four would take every loop for another 10 s first: the receiver would
  // have seen eight of them before the other endpoint's delivery.
  it('a slow endpoint holds only its share of the loops: another endpoint is served meanwhile', async () => {
    await own?.close();
    own = await startTestServer({
      ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
      ESIG_WEBHOOK_CA_FILE: rx.certFile,
      ESIG_WORKER_POLL_MS: '20',
      ESIG_WEBHOOK_CONCURRENCY: '4',
    });
    const slow = await own.call('POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/gate-slow`, events: ['document.created'] } });
    const quick = await own.call('POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/gate-quick`, events: ['request.sent'] } });
    expect([slow.status, quick.status]).toEqual([201, 201]);
    rx.answer('/gate-slow', { hang: true });
    for (let i = 0; i < 8; i++) await own.uploadPdf(`slow-${i}.pdf`);
    const { req } = await own.draftReady();
    expect((await own.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
    await rx.waitFor((r) => r.path === '/gate-quick', 1, 60_000);
    const slowSeen = rx.requests.filter((r) => r.path === '/gate-slow').length;
    // At most the first round's four (fewer when the uploads took over a second: the first delivery, still in
    // flight, showed the endpoint slow) and the one let through after it.
    expect(slowSeen).toBeGreaterThanOrEqual(1);
    expect(slowSeen).toBeLessThanOrEqual(5);
  }, 60_000);

  // Each new job wakes only the worker that serves its kind. The poll is an hour away, so a delivery and a mail
  // can only go out because their commits woke the delivery worker and the mail worker: a wake-up routed to the
  // wrong worker (or to none) leaves one of them waiting, and the test times out.
  it('a new delivery wakes the delivery worker and a new mail the mail worker, with the next poll an hour away', async () => {
    await own?.close();
    own = await startTestServer({
      ESIG_WEBHOOK_ALLOW_HOSTS: '127.0.0.1/32,localhost',
      ESIG_WEBHOOK_CA_FILE: rx.certFile,
      ESIG_WORKER_POLL_MS: String(60 * 60 * 1000),
    });
    const made = await own.call('POST', '/api/v1/webhooks/endpoints', { body: { url: `${rx.url}/woken`, events: ['document.created', 'request.sent'] } });
    expect(made.status, made.text).toBe(201);
    const { req, rcp } = await own.draftReady();
    await rx.waitFor((r) => r.path === '/woken' && r.headers['esig-event-type'] === 'document.created');
    expect((await own.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
    await until(async () => {
      const mails = (await own.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(rcp.email)}&limit=10`)).body.data as Array<{ subject: string }>;
      return mails.some((m) => /Please sign/.test(m.subject)) ? true : undefined;
    }, 'the invitation');
    await rx.waitFor((r) => r.path === '/woken' && r.headers['esig-event-type'] === 'request.sent');
  }, 30_000);
});
