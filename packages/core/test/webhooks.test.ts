import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { ApiScope, DomainError, DomainEvent, EventType, Principal, Tenant, WebhookDelivery, WebhookEndpoint, WebhookSender } from '@esig/core';
import { API_SCOPES, DELIVERY_TIMEOUT_MS, createReceiverGate, DISABLE_AFTER_FAILING_MS, DISABLE_AFTER_FINAL_FAILURES, MAX_DELIVERY_ATTEMPTS, MAX_INLINE_FANOUT, RETRY_GAPS_MS, SECRET_OVERLAP_MS, createWebhookEndpoint, deleteWebhookEndpoint, getWebhookEndpoint, handleSeal, handleWebhookDeliver, handleWebhookDispatch, listWebhookDeliveries, listWebhookEndpoints, resendWebhookDelivery, rotateWebhookSecret, signAsRecipient, testWebhookEndpoint, updateWebhookEndpoint } from '@esig/core';
import { MAX_OPENED_SECRETS, recordEvent, secretOpener, webhookBody } from '@esig/core/internal';
import { createAesGcmSecretBox } from '@esig/runtime-node';
import { OTHER_TENANTS, TENANT } from './arbitraries.js';
import type { Reply } from './fakes.js';
import { left, principal, right } from './support.js';
import type { World } from './world.js';
import { CLIENT, DAY, claim, commit, runJob, runOk, sentRequest, signInput, world } from './world.js';

const HOOK = 'https://hooks.example';
const now = (w: World) => w.h.clock.now().toISOString();

/** An endpoint created through the use case, with a receiver at its URL that knows its secret. */
const endpoint = async (w: World, o: { url?: string; events?: EventType[]; p?: Principal } = {}) => {
  const url = o.url ?? `${HOOK}/${w.h.ids.next('whe').slice(-6)}`;
  const receiver = w.net.receiver(url);
  const created = await right(pipe(createWebhookEndpoint(w.deps)(o.p ?? w.p, { url, events: o.events ?? ['request.completed'] }), TE.chainW(w.run)));
  receiver.secrets = [created.secret];
  return { ...created, receiver };
};

/** Records an event as every use case does (outbox, and its deliveries or dispatch job when someone subscribes). */
const emit = async (w: World, type: EventType = 'request.completed', tenant: Tenant = TENANT): Promise<DomainEvent> => {
  const event: DomainEvent = { id: w.h.ids.next('evt'), orgId: tenant.orgId, mode: tenant.mode, type, createdAt: now(w), data: { request_id: 'req_1', status: 'COMPLETED' }, redeliveryOf: null };
  await right(w.h.uow.transaction((tx) => recordEvent(tx, w.h.ids, event)));
  return event;
};

/** Runs the due dispatch jobs, as the worker would (an event has one when it has more than MAX_INLINE_FANOUT subscribers). */
const dispatchDue = async (w: World) => {
  for (const job of await claim(w, ['webhook.dispatch'], now(w))) await runOk(w, handleWebhookDispatch(w.deps), job);
};

/** Claims the deliver jobs due now, with their deliveries. */
const dueDeliveries = async (w: World) =>
  Promise.all(
    (await claim(w, ['webhook.deliver'], now(w))).map(async (job) => ({ job, delivery: (await right(w.h.stores.webhookDeliveries.findById({ orgId: job.orgId, mode: job.mode }, job.payload.deliveryId!)))! })),
  );

/** The one deliver job due now, with its delivery. */
const oneDue = async (w: World) => {
  const due = await dueDeliveries(w);
  expect(due).toHaveLength(1);
  return due[0]!;
};

/** Runs the one deliver job due now, as the worker would; returns its delivery as it was before. */
const deliverOne = async (w: World) => {
  const { job, delivery: d } = await oneDue(w);
  await runOk(w, handleWebhookDeliver(w.deps), job);
  return d;
};

/** Runs every deliver job due now; returns how many ran. */
const deliverDue = async (w: World) => {
  const due = await dueDeliveries(w);
  for (const { job } of due) await runOk(w, handleWebhookDeliver(w.deps), job);
  return due.length;
};

const delivery = async (w: World, d: { readonly id: string }, tenant: Tenant = TENANT): Promise<WebhookDelivery> => (await right(w.h.stores.webhookDeliveries.findById(tenant, d.id)))!;
const endpointNow = async (w: World, e: { readonly id: string }, tenant: Tenant = TENANT): Promise<WebhookEndpoint | null> => right(w.h.stores.webhookEndpoints.findById(tenant, e.id));
const attempts = async (w: World, filter: { endpointId?: string; eventId?: string } = {}) => (await right(listWebhookDeliveries(w.deps)(w.p, { limit: 100, order: 'asc' }, filter, (a) => a))).data;
const webhookLog = async (w: World, tenant: Tenant = TENANT) => (await right(w.h.stores.apiLog.list(tenant, { limit: 1000, order: 'asc', after: null, filter: { kind: 'webhook' } }))).items;
const update = (w: World, id: string, input: Parameters<ReturnType<typeof updateWebhookEndpoint>>[2], p: Principal = w.p) =>
  pipe(updateWebhookEndpoint(w.deps)(p, id, input), TE.chainW(w.run));
/** The `v1` signatures of an Esig-Signature header. */
const v1s = (header: string) => header.split(',').filter((x) => x.startsWith('v1='));

describe('createWebhookEndpoint', () => {
  it('creates an enabled endpoint in the caller’s org and mode, returns its secret once and stores it only sealed', async () => {
    const w = world();
    const live = principal(['webhooks:write', 'webhooks:read'], { orgId: 'org_A', mode: 'live' });
    w.net.receiver(`${HOOK}/in`);
    const { endpoint: e, secret } = await right(
      pipe(createWebhookEndpoint(w.deps)(live, { url: `${HOOK}/in`, events: ['request.completed', 'signer.signed', 'request.completed'], description: 'CRM' }), TE.chainW(w.run)),
    );
    expect(secret).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
    expect(e).toMatchObject({ orgId: 'org_A', mode: 'live', url: `${HOOK}/in`, events: ['request.completed', 'signer.signed'], description: 'CRM', enabled: true, disabledReason: null, consecutiveFinalFailures: 0, failingSince: null, createdAt: now(w) });
    const stored = (await endpointNow(w, e, live.tenant))!;
    expect(stored).toEqual(e);
    expect(JSON.stringify(stored)).not.toContain(secret.slice(6));
    expect(stored.secrets).toHaveLength(1);
    expect(w.deps.secrets.open(stored.secrets[0]!.sealed)).toEqual(E.right(secret));
    // Shown once: reading it back never shows the secret.
    expect(JSON.stringify(await right(getWebhookEndpoint(w.deps)(live, e.id)))).not.toContain(secret.slice(6));
  });

  it('refuses a URL the target rules refuse (ValidationFailed on url), and stores nothing', async () => {
    const w = world();
    w.net.receiver(`${HOOK}/in`);
    for (const url of ['http://hooks.example/in', 'https://user:pw@hooks.example/in', 'https://127.0.0.1/in', 'https://10.1.2.3/in', 'https://localhost/in', 'https://nowhere.example/in', 'not a url']) {
      const e = await left(createWebhookEndpoint(w.deps)(w.p, { url, events: ['request.completed'] }));
      expect(e, url).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'url' }] });
    }
    expect((await right(listWebhookEndpoints(w.deps)(w.p, {}, (e) => e.id))).data).toEqual([]);
  });
});

describe('webhook use cases and scopes', () => {
  it('each needs its scope: webhooks:read to read, webhooks:write to change', async () => {
    const w = world();
    const e = await endpoint(w);
    await emit(w);
    await dispatchDue(w);
    const { delivery: d } = await oneDue(w);
    const cases: Array<[ApiScope, (p: Principal) => TE.TaskEither<DomainError, unknown>]> = [
      ['webhooks:read', (p) => getWebhookEndpoint(w.deps)(p, e.endpoint.id)],
      ['webhooks:read', (p) => listWebhookEndpoints(w.deps)(p, {}, (x) => x.id)],
      ['webhooks:read', (p) => listWebhookDeliveries(w.deps)(p, {}, {}, (x) => x.id)],
      ['webhooks:write', (p) => pipe(createWebhookEndpoint(w.deps)(p, { url: e.receiver.url, events: ['request.sent'] }), TE.chainW(w.run))],
      ['webhooks:write', (p) => update(w, e.endpoint.id, { description: 'x' }, p)],
      ['webhooks:write', (p) => w.run(rotateWebhookSecret(w.deps)(p, e.endpoint.id))],
      ['webhooks:write', (p) => w.run(testWebhookEndpoint(w.deps)(p, e.endpoint.id))],
      ['webhooks:write', (p) => w.run(resendWebhookDelivery(w.deps)(p, d.id))],
      ['webhooks:write', (p) => w.run(deleteWebhookEndpoint(w.deps)(p, e.endpoint.id))],
    ];
    const before = await endpointNow(w, e.endpoint);
    for (const [scope, call] of cases)
      expect(await left(call(principal(API_SCOPES.filter((s) => s !== scope)))), scope).toEqual({ _tag: 'InsufficientScope', scope });
    expect(await endpointNow(w, e.endpoint)).toEqual(before);
    for (const [scope, call] of cases) expect(E.isRight(await call(principal([scope]))()), scope).toBe(true);
  });
});

describe('getWebhookEndpoint and listWebhookEndpoints', () => {
  it('show the caller’s endpoints only: another org or mode finds nothing', async () => {
    const w = world();
    const mine = await endpoint(w);
    for (const t of OTHER_TENANTS) {
      const stranger = principal(['*'], t);
      expect(await left(getWebhookEndpoint(w.deps)(stranger, mine.endpoint.id))).toEqual({ _tag: 'NotFound', resource: 'webhook_endpoint', id: mine.endpoint.id });
      expect((await right(listWebhookEndpoints(w.deps)(stranger, {}, (e) => e.id))).data).toEqual([]);
      expect(await left(update(w, mine.endpoint.id, { enabled: false }, stranger))).toMatchObject({ _tag: 'NotFound' });
      expect(await left(w.run(deleteWebhookEndpoint(w.deps)(stranger, mine.endpoint.id)))).toMatchObject({ _tag: 'NotFound' });
      expect(await left(w.run(rotateWebhookSecret(w.deps)(stranger, mine.endpoint.id)))).toMatchObject({ _tag: 'NotFound' });
      expect(await left(w.run(testWebhookEndpoint(w.deps)(stranger, mine.endpoint.id)))).toMatchObject({ _tag: 'NotFound' });
    }
    expect((await right(getWebhookEndpoint(w.deps)(w.p, mine.endpoint.id))).enabled).toBe(true);
  });

  it('lists every endpoint once, a page at a time', async () => {
    const w = world();
    const made = [];
    for (let i = 0; i < 5; i++) made.push((await endpoint(w)).endpoint.id);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await right(listWebhookEndpoints(w.deps)(w.p, { limit: 2, order: 'asc', ...(cursor ? { cursor } : {}) }, (e) => e.id));
      seen.push(...page.data);
      cursor = page.pageInfo.hasMore ? (page.pageInfo.nextCursor ?? undefined) : undefined;
    } while (cursor);
    expect(seen).toEqual(made);
  });
});

describe('updateWebhookEndpoint', () => {
  it('changes the URL, the events and the description; a refused URL changes nothing', async () => {
    const w = world();
    const e = await endpoint(w);
    w.net.receiver(`${HOOK}/moved`);
    w.h.clock.advance(1000);
    const next = await right(update(w, e.endpoint.id, { url: `${HOOK}/moved`, events: ['signer.signed', 'signer.signed'], description: null }));
    expect(next).toMatchObject({ url: `${HOOK}/moved`, events: ['signer.signed'], description: null, enabled: true, updatedAt: now(w), createdAt: e.endpoint.createdAt, version: 2 });
    expect(await endpointNow(w, e.endpoint)).toEqual(next);
    expect(await left(update(w, e.endpoint.id, { url: 'http://hooks.example/plain', description: 'changed' }))).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'url' }] });
    expect(await endpointNow(w, e.endpoint)).toEqual(next);
  });

  it('disabling through the API records why, and cancels the waiting deliveries', async () => {
    const w = world();
    const e = await endpoint(w);
    const other = await endpoint(w);
    await emit(w);
    await dispatchDue(w);
    const deliveries = await dueDeliveries(w);
    const disabled = await right(update(w, e.endpoint.id, { enabled: false }));
    expect(disabled).toMatchObject({ enabled: false, disabledReason: 'disabled through the API', disabledAt: now(w) });
    for (const { delivery: d } of deliveries) expect((await delivery(w, d)).status).toBe(d.endpointId === e.endpoint.id ? 'cancelled' : 'pending');
    // A disabled endpoint gets no new deliveries, and its cancelled ones send nothing.
    await emit(w);
    await dispatchDue(w);
    expect((await dueDeliveries(w)).map((x) => x.delivery.endpointId)).toEqual([other.endpoint.id]);
    for (const { job } of deliveries) await runOk(w, handleWebhookDeliver(w.deps), job);
    expect(e.receiver.received).toEqual([]);
  });

  it('enabling a disabled endpoint clears its failure record, and new events reach it again', async () => {
    const w = world();
    const e = await endpoint(w);
    e.receiver.answer(...Array.from({ length: DISABLE_AFTER_FINAL_FAILURES }, () => ({ status: 410 })));
    for (let i = 0; i < DISABLE_AFTER_FINAL_FAILURES; i++) {
      await emit(w);
      await dispatchDue(w);
      await deliverDue(w);
    }
    expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: false, consecutiveFinalFailures: DISABLE_AFTER_FINAL_FAILURES });
    const enabled = await right(update(w, e.endpoint.id, { enabled: true }));
    expect(enabled).toMatchObject({ enabled: true, disabledReason: null, disabledAt: null, consecutiveFinalFailures: 0, failingSince: null });
    await emit(w);
    await dispatchDue(w);
    expect(await deliverDue(w)).toBe(1);
    expect(e.receiver.received.at(-1)!.verified.ok).toBe(true);
  });
});

describe('deleteWebhookEndpoint', () => {
  it('deletes the endpoint and cancels its waiting deliveries; the delivery log stays', async () => {
    const w = world();
    const e = await endpoint(w);
    e.receiver.answer({ status: 503 });
    await emit(w);
    await dispatchDue(w);
    const d = await deliverOne(w);
    expect((await delivery(w, d)).status).toBe('pending');
    const logged = await attempts(w);
    expect(logged).toHaveLength(1);
    expect((await right(w.run(deleteWebhookEndpoint(w.deps)(w.p, e.endpoint.id)))).id).toBe(e.endpoint.id);
    expect(await left(getWebhookEndpoint(w.deps)(w.p, e.endpoint.id))).toMatchObject({ _tag: 'NotFound' });
    expect((await delivery(w, d)).status).toBe('cancelled');
    expect(await attempts(w)).toEqual(logged);
    expect(await left(w.run(deleteWebhookEndpoint(w.deps)(w.p, e.endpoint.id)))).toMatchObject({ _tag: 'NotFound' });
    // The retry that was scheduled sends nothing.
    w.h.clock.advance(DAY);
    await deliverDue(w);
    expect(e.receiver.received).toHaveLength(1);
  });
});

describe('rotateWebhookSecret', () => {
  it('returns a new secret; for 24 hours both sign, the new one first, then only the new one', async () => {
    const w = world();
    const e = await endpoint(w);
    const old = e.secret;
    w.h.clock.advance(1000);
    const rotated = await right(w.run(rotateWebhookSecret(w.deps)(w.p, e.endpoint.id)));
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9]{43}$/);
    expect(rotated.secret).not.toBe(old);
    expect(rotated.endpoint.secrets.map((s) => [w.deps.secrets.open(s.sealed), s.retiresAt])).toEqual([
      [E.right(rotated.secret), null],
      [E.right(old), new Date(w.h.clock.now().getTime() + SECRET_OVERLAP_MS).toISOString()],
    ]);
    const deliverOnce = async (secrets: string[]) => {
      e.receiver.secrets = secrets;
      await emit(w);
      await dispatchDue(w);
      await deliverDue(w);
      return e.receiver.received.at(-1)!;
    };
    // Within the window, a receiver that knows either secret verifies.
    for (const secrets of [[old], [rotated.secret]]) {
      const got = await deliverOnce(secrets);
      expect(got.verified.ok).toBe(true);
      expect(v1s(got.request.headers['Esig-Signature']!)).toHaveLength(2);
    }
    const newFirst = v1s(e.receiver.received.at(-1)!.request.headers['Esig-Signature']!)[0]!;
    expect(newFirst).toBe(`v1=${w.h.crypto.hmacSha256Hex(rotated.secret, `${Math.floor(w.h.clock.now().getTime() / 1000)}.${e.receiver.received.at(-1)!.request.body}`)}`);
    w.h.clock.advance(SECRET_OVERLAP_MS - 1);
    expect((await deliverOnce([old])).verified.ok).toBe(true);
    // From the end of the window, only the new secret signs: a receiver still on the old one refuses.
    w.h.clock.advance(1);
    const late = await deliverOnce([old]);
    expect(v1s(late.request.headers['Esig-Signature']!)).toHaveLength(1);
    expect(late.verified).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect((await deliverOnce([rotated.secret])).verified.ok).toBe(true);
  });

  it('keeps every secret whose window is open across rotations, and drops those whose window ended', async () => {
    const w = world();
    const e = await endpoint(w);
    const second = await right(w.run(rotateWebhookSecret(w.deps)(w.p, e.endpoint.id)));
    w.h.clock.advance(DAY / 2);
    const third = await right(w.run(rotateWebhookSecret(w.deps)(w.p, e.endpoint.id)));
    expect(third.endpoint.secrets.map((s) => w.deps.secrets.open(s.sealed))).toEqual([E.right(third.secret), E.right(second.secret), E.right(e.secret)]);
    w.h.clock.advance(DAY / 2);
    const fourth = await right(w.run(rotateWebhookSecret(w.deps)(w.p, e.endpoint.id)));
    expect(fourth.endpoint.secrets.map((s) => w.deps.secrets.open(s.sealed))).toEqual([E.right(fourth.secret), E.right(third.secret), E.right(second.secret)]);
  });
});

describe('secretOpener', () => {
  const counting = () => {
    const box = createAesGcmSecretBox(new Uint8Array(32).fill(9));
    const opened: string[] = [];
    return { box, opened, counted: { ...box, open: (sealed: string) => (opened.push(sealed), box.open(sealed)) } };
  };

  it('opens each sealed value once, and what it gives is what the box gives', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 8 }), fc.array(fc.nat(), { maxLength: 60 }), (plains, picks) => {
        const { box, opened, counted } = counting();
        const sealed = plains.map((p) => box.seal(p));
        const open = secretOpener(counted);
        for (const i of picks) expect(open(sealed[i % sealed.length]!)).toBe(plains[i % sealed.length]);
        expect(opened).toEqual([...new Set(picks.map((i) => sealed[i % sealed.length]!))]);
      }),
    );
  });

  it('keeps nothing that does not open, and at most MAX_OPENED_SECRETS values', () => {
    const { box, opened, counted } = counting();
    const open = secretOpener(counted);
    expect(open('v1.garbage')).toBeNull();
    expect(open('v1.garbage')).toBeNull();
    expect(opened).toHaveLength(2);
    const sealed = Array.from({ length: MAX_OPENED_SECRETS + 1 }, (_, i) => box.seal(`whsec_${i}`));
    sealed.forEach((s) => open(s));
    opened.length = 0;
    // The one past the bound dropped the kept ones: the first is opened again, the last is still kept.
    expect(open(sealed[0]!)).toBe('whsec_0');
    expect(open(sealed.at(-1)!)).toBe(`whsec_${MAX_OPENED_SECRETS}`);
    expect(opened).toEqual([sealed[0]]);
  });

  it('lets one handler sign every delivery with the secrets in force across a rotation, opening each once', async () => {
    const w = world();
    const opened: string[] = [];
    const deliver = handleWebhookDeliver({ ...w.deps, secrets: { ...w.deps.secrets, open: (sealed) => (opened.push(sealed), w.deps.secrets.open(sealed)) } });
    const e = await endpoint(w);
    const deliverNext = async () => {
      await emit(w);
      await dispatchDue(w);
      for (const { job } of await dueDeliveries(w)) await runOk(w, deliver, job);
      return e.receiver.received.at(-1)!;
    };
    for (let i = 0; i < 3; i++) expect((await deliverNext()).verified.ok).toBe(true);
    expect(opened).toHaveLength(1);
    const rotated = await right(w.run(rotateWebhookSecret(w.deps)(w.p, e.endpoint.id)));
    e.receiver.secrets = [rotated.secret];
    const both = await deliverNext();
    expect(both.verified.ok).toBe(true);
    expect(v1s(both.request.headers['Esig-Signature']!)).toHaveLength(2);
    // The new sealed secret is opened; the old one, still in its window, was kept.
    expect(opened).toHaveLength(2);
    w.h.clock.advance(SECRET_OVERLAP_MS);
    const late = await deliverNext();
    expect(v1s(late.request.headers['Esig-Signature']!)).toHaveLength(1);
    expect(late.verified.ok).toBe(true);
    expect(opened).toHaveLength(2);
  });
});

describe('testWebhookEndpoint', () => {
  it('queues a webhook.test delivery, signed and delivered like any other, that is not in the event log', async () => {
    const w = world();
    const e = await endpoint(w, { events: ['request.completed'] });
    const d = await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
    expect(d).toMatchObject({ endpointId: e.endpoint.id, eventType: 'webhook.test', status: 'pending', attempts: 0 });
    expect(JSON.parse(d.body)).toEqual({ id: d.eventId, type: 'webhook.test', created: now(w), test_mode: true, data: { endpoint_id: e.endpoint.id } });
    expect(await right(w.h.stores.events.findById(TENANT, d.eventId))).toBeNull();
    expect(await deliverDue(w)).toBe(1);
    const [got] = e.receiver.received;
    expect(got!.verified.ok).toBe(true);
    expect(got!.request.body).toBe(d.body);
    expect((await delivery(w, d)).status).toBe('succeeded');
  });

  it('leaves the endpoint’s health alone: a receiver that refuses its test deliveries for good is not disabled for it', async () => {
    const w = world();
    const e = await endpoint(w);
    // A receiver being set up that answers 400 to a type it does not know: each a final failure.
    e.receiver.answer(...Array.from({ length: DISABLE_AFTER_FINAL_FAILURES + 1 }, () => ({ status: 400 })));
    for (let i = 0; i <= DISABLE_AFTER_FINAL_FAILURES; i++) {
      const d = await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
      expect(await deliverDue(w)).toBe(1);
      expect((await delivery(w, d)).status).toBe('failed');
    }
    expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: true, consecutiveFinalFailures: 0, failingSince: null });
  });

  it('refuses a disabled endpoint, InvalidState, rather than queue a delivery that is never attempted; a resend to it too', async () => {
    const w = world();
    const e = await endpoint(w);
    const d = await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
    await right(update(w, e.endpoint.id, { enabled: false }));
    expect(await left(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)))).toMatchObject({ _tag: 'InvalidState', detail: expect.stringContaining('is disabled') });
    expect(await left(w.run(resendWebhookDelivery(w.deps)(w.p, d.id)))).toMatchObject({ _tag: 'InvalidState', detail: expect.stringContaining('PATCH {"enabled": true}') });
    await right(update(w, e.endpoint.id, { enabled: true }));
    await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
  });
});

describe('resendWebhookDelivery', () => {
  it('resends the event with a new id and redelivery_of the original, to the same endpoint, whatever became of the original', async () => {
    const w = world();
    const e = await endpoint(w);
    e.receiver.answer({ status: 404 });
    const original = await emit(w);
    await dispatchDue(w);
    await deliverDue(w);
    const [first] = await attempts(w);
    expect(first).toMatchObject({ eventId: original.id, succeeded: false });
    w.h.clock.advance(60_000);
    const resent = await right(w.run(resendWebhookDelivery(w.deps)(w.p, first!.deliveryId)));
    expect(resent).toMatchObject({ endpointId: e.endpoint.id, eventType: 'request.completed', status: 'pending', attempts: 0 });
    expect(resent.id).not.toBe(first!.deliveryId);
    expect(resent.eventId).not.toBe(original.id);
    expect(JSON.parse(resent.body)).toEqual({ id: resent.eventId, type: 'request.completed', created: now(w), test_mode: true, data: original.data, redelivery_of: original.id });
    // The new event is in the log, pointing at the original.
    expect(await right(w.h.stores.events.findById(TENANT, resent.eventId))).toMatchObject({ type: 'request.completed', redeliveryOf: original.id, data: original.data });
    await deliverDue(w);
    const got = e.receiver.received.at(-1)!;
    expect([got.verified.ok, got.request.headers['Esig-Event-Id'], got.request.headers['Esig-Delivery-Id']]).toEqual([true, resent.eventId, resent.id]);
    expect((await delivery(w, resent)).status).toBe('succeeded');
    // A test delivery resent stays out of the event log.
    const test = await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
    const again = await right(w.run(resendWebhookDelivery(w.deps)(w.p, test.id)));
    expect(JSON.parse(again.body)).toMatchObject({ type: 'webhook.test', redelivery_of: test.eventId, data: { endpoint_id: e.endpoint.id } });
    expect(await right(w.h.stores.events.findById(TENANT, again.eventId))).toBeNull();
  });

  it('an unknown delivery, another tenant’s, or one whose endpoint is gone is NotFound', async () => {
    const w = world();
    const e = await endpoint(w);
    const d = await right(w.run(testWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
    expect(await left(w.run(resendWebhookDelivery(w.deps)(w.p, 'dlv_unknown')))).toEqual({ _tag: 'NotFound', resource: 'webhook_delivery', id: 'dlv_unknown' });
    for (const t of OTHER_TENANTS) expect(await left(w.run(resendWebhookDelivery(w.deps)(principal(['*'], t), d.id)))).toMatchObject({ _tag: 'NotFound', resource: 'webhook_delivery' });
    await right(w.run(deleteWebhookEndpoint(w.deps)(w.p, e.endpoint.id)));
    expect(await left(w.run(resendWebhookDelivery(w.deps)(w.p, d.id)))).toEqual({ _tag: 'NotFound', resource: 'webhook_endpoint', id: e.endpoint.id });
  });
});

describe('handleWebhookDispatch', () => {
  it('the seal’s request.completed reaches a subscribed endpoint as the spec’s body, under the id request.completed:<request>', async () => {
    const w = world();
    const e = await endpoint(w, { events: ['request.completed'] });
    const s = await sentRequest(w);
    await right(signAsRecipient(w.deps)(s.signers[0]!.token, signInput(s.signers[0]!), CLIENT));
    for (const job of await claim(w, ['seal.complete'])) await runOk(w, handleSeal(w.deps), job);
    await dispatchDue(w);
    expect(await deliverDue(w)).toBe(1);
    const got = e.receiver.received[0]!;
    expect(got.verified.ok).toBe(true);
    const body = JSON.parse(got.request.body);
    expect(Object.keys(body)).toEqual(['id', 'type', 'created', 'test_mode', 'data']);
    expect(body).toMatchObject({ id: `request.completed:${s.req.id}`, type: 'request.completed', test_mode: true, data: { request_id: s.req.id, status: 'COMPLETED' } });
    expect(got.request.headers['Esig-Event-Id']).toBe(`request.completed:${s.req.id}`);
  });

  it('fans an event out exactly once to each enabled endpoint of its org and mode subscribed to its type', async () => {
    const fanouts = new Set<string>();
    const types: EventType[] = ['request.completed', 'request.sent', 'signer.signed'];
    const tenants: Tenant[] = [TENANT, ...OTHER_TENANTS];
    const endpointSpec = fc.record({ tenant: fc.nat(tenants.length - 1), events: fc.subarray(types, { minLength: 1 }), enabled: fc.boolean() });
    await fc.assert(
      // Up to 10 endpoints over the tenants, so both ways to fan out (inline, and the dispatch job past
      // MAX_INLINE_FANOUT subscribers) come up; a few more runs than usual, for the rarer one.
      fc.asyncProperty(fc.array(endpointSpec, { maxLength: 10 }), fc.nat(tenants.length - 1), fc.constantFrom(...types), async (specs, eventTenant, type) => {
        const w = world();
        const made = [];
        for (const spec of specs) {
          const p = principal(['*'], tenants[spec.tenant]!);
          const e = await endpoint(w, { events: spec.events, p });
          if (!spec.enabled) await right(update(w, e.endpoint.id, { enabled: false }, p));
          made.push({ spec, id: e.endpoint.id });
        }
        const event = await emit(w, type, tenants[eventTenant]!);
        const matching = made.filter((m) => m.spec.tenant === eventTenant && m.spec.enabled && m.spec.events.includes(type)).map((m) => m.id);
        // A dispatch job only for more subscribers than are written inline; none when nobody listens.
        const dispatches = await claim(w, ['webhook.dispatch'], now(w));
        expect(dispatches.map((j) => j.dedupeKey)).toEqual(matching.length > MAX_INLINE_FANOUT ? [`dispatch:${event.id}`] : []);
        fanouts.add(matching.length === 0 ? 'none' : matching.length > MAX_INLINE_FANOUT ? 'dispatched' : 'inline');
        for (const job of dispatches) await runOk(w, handleWebhookDispatch(w.deps), job);
        const deliveries = (await dueDeliveries(w)).map((x) => x.delivery);
        expect(deliveries.map((d) => d.endpointId)).toEqual(matching);
        for (const d of deliveries) {
          expect(d).toMatchObject({ orgId: event.orgId, mode: event.mode, eventId: event.id, eventType: type, status: 'pending', attempts: 0, nextAttemptAt: now(w) });
          expect(d.body).toBe(webhookBody(event));
        }
      }),
      {
        numRuns: 100,
        // Each way to fan out at least once, whatever the seed: inline, and through the dispatch job.
        examples: [
          [[{ tenant: 0, events: ['request.sent'], enabled: true }], 0, 'request.sent'],
          [Array.from({ length: MAX_INLINE_FANOUT + 1 }, () => ({ tenant: 0, events: ['request.sent'] as EventType[], enabled: true })), 0, 'request.sent'],
        ],
      },
    );
    // The property saw each way an event fans out, not only the common one.
    expect([...fanouts].sort()).toEqual(['dispatched', 'inline', 'none']);
  });

  it('an event that does not exist, or exists in another tenant, dispatches nothing', async () => {
    const w = world();
    // Enough subscribers for the event to go through a dispatch job.
    for (let i = 0; i <= MAX_INLINE_FANOUT; i++) await endpoint(w);
    const event = await emit(w);
    const dispatches = await claim(w, ['webhook.dispatch']);
    expect(dispatches).toHaveLength(1);
    for (const job of dispatches) {
      for (const other of [{ ...job, payload: { eventId: 'evt_gone' } }, { ...job, orgId: 'org_B' }])
        expect(E.isRight(await commit(w, await right(handleWebhookDispatch(w.deps)(other))))).toBe(true);
      expect(await dueDeliveries(w)).toEqual([]);
      await runOk(w, handleWebhookDispatch(w.deps), job);
    }
    expect((await dueDeliveries(w)).map((x) => x.delivery.eventId)).toEqual(Array.from({ length: MAX_INLINE_FANOUT + 1 }, () => event.id));
  });
});

describe('handleWebhookDeliver', () => {
  it('signs with the secret in force and sends the delivery’s stored body with its headers, within the time limit', async () => {
    const w = world();
    const e = await endpoint(w);
    await emit(w);
    await dispatchDue(w);
    w.h.clock.advance(1234);
    const { job, delivery: d } = await oneDue(w);
    await runOk(w, handleWebhookDeliver(w.deps), job);
    expect(w.net.sent).toHaveLength(1);
    const sent = w.net.sent[0]!;
    const t = Math.floor(w.h.clock.now().getTime() / 1000);
    expect(sent).toEqual({
      url: e.endpoint.url,
      body: d.body,
      headers: {
        'Esig-Signature': `t=${t},v1=${w.h.crypto.hmacSha256Hex(e.secret, `${t}.${d.body}`)}`,
        'Esig-Event-Id': d.eventId,
        'Esig-Event-Type': 'request.completed',
        'Esig-Delivery-Id': d.id,
        'Esig-Attempt': '1',
        'Esig-Timestamp': String(t),
      },
      timeoutMs: DELIVERY_TIMEOUT_MS,
    });
    expect(e.receiver.received[0]!.verified).toEqual({ ok: true, timestamp: t });
  });

  it('records every attempt in the delivery log and the request log; a 2xx succeeds', async () => {
    const w = world();
    const e = await endpoint(w);
    e.receiver.answer({ noAnswer: 'timeout' }, { status: 201, body: `${'é'.repeat(600)}` });
    await emit(w);
    await dispatchDue(w);
    const d = await deliverOne(w);
    const firstAt = now(w);
    w.h.clock.advance(RETRY_GAPS_MS[0]!);
    expect(await deliverDue(w)).toBe(1);
    const log = await attempts(w, { endpointId: e.endpoint.id });
    const common = { deliveryId: d.id, endpointId: e.endpoint.id, eventId: d.eventId, eventType: 'request.completed', orgId: TENANT.orgId, mode: TENANT.mode };
    expect(log).toEqual([
      { ...common, id: expect.any(String), attempt: 1, outcome: 'timeout', succeeded: false, durationMs: DELIVERY_TIMEOUT_MS, responseBody: `timeout after ${DELIVERY_TIMEOUT_MS} ms`, createdAt: firstAt },
      // 1,024 bytes of the body: 512 two-byte characters.
      { ...common, id: expect.any(String), attempt: 2, outcome: '201', succeeded: true, durationMs: 13, responseBody: 'é'.repeat(512), createdAt: now(w) },
    ]);
    expect(await webhookLog(w)).toEqual([
      expect.objectContaining({ kind: 'webhook', method: 'POST', target: e.endpoint.url, status: null, outcome: 'timeout', durationMs: DELIVERY_TIMEOUT_MS, keyId: null, createdAt: firstAt }),
      expect.objectContaining({ kind: 'webhook', method: 'POST', target: e.endpoint.url, status: 201, outcome: '201', durationMs: 13, keyId: null, createdAt: now(w) }),
    ]);
    expect(await delivery(w, d)).toMatchObject({ status: 'succeeded', attempts: 2, nextAttemptAt: null, lastAttemptAt: now(w), lastOutcome: '201' });
    // A success clears the endpoint's failure record.
    expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: true, consecutiveFinalFailures: 0, failingSince: null });
    expect(await claim(w, ['webhook.deliver'])).toEqual([]);
  });

  it('retries 5xx, 408, 425, 429 and unanswered attempts on the schedule, stretched to Retry-After, until 8 attempts are spent', async () => {
    expect(RETRY_GAPS_MS).toEqual([60_000, 300_000, 900_000, 2_700_000, 7_200_000, 14_400_000, 28_800_000]);
    const retried: fc.Arbitrary<Reply> = fc.oneof(
      fc.integer({ min: 500, max: 599 }).map((status) => ({ status })),
      fc.record({ status: fc.constantFrom(408, 425, 429, 503), retryAfterS: fc.integer({ min: 0, max: 40_000 }) }),
      fc.constantFrom('timeout', 'connect', 'tls', 'dns').map((noAnswer) => ({ noAnswer }) as Reply),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(retried, { maxLength: MAX_DELIVERY_ATTEMPTS }), async (failures) => {
        const w = world();
        const e = await endpoint(w);
        e.receiver.answer(...failures);
        await emit(w);
        await dispatchDue(w);
        const start = now(w);
        let deliveryId = '';
        for (let attempt = 1; ; attempt++) {
          const due = await dueDeliveries(w);
          expect(due).toHaveLength(1);
          const { job, delivery: d } = due[0]!;
          deliveryId = d.id;
          expect(job.dedupeKey).toBe(`deliver:${d.id}:${attempt}`);
          await runOk(w, handleWebhookDeliver(w.deps), job);
          expect(w.net.sent.at(-1)!.headers['Esig-Attempt']).toBe(String(attempt));
          const after = await delivery(w, d);
          const reply = failures[attempt - 1];
          if (reply === undefined) {
            expect(after).toMatchObject({ status: 'succeeded', attempts: attempt });
            break;
          }
          if (attempt === MAX_DELIVERY_ATTEMPTS) {
            expect(after).toMatchObject({ status: 'failed', attempts: attempt, nextAttemptAt: null });
            expect(await claim(w, ['webhook.deliver'])).toEqual([]);
            break;
          }
          const asked = 'status' in reply && reply.retryAfterS !== undefined ? Math.min(reply.retryAfterS * 1000, 28_800_000) : 0;
          const next = new Date(w.h.clock.now().getTime() + Math.max(RETRY_GAPS_MS[attempt - 1]!, asked)).toISOString();
          expect(after).toMatchObject({ status: 'pending', attempts: attempt, nextAttemptAt: next });
          // Not due a moment before its time; due at it.
          w.h.clock.set(new Date(Date.parse(next) - 1));
          expect(await dueDeliveries(w)).toEqual([]);
          w.h.clock.set(next);
        }
        const log = await attempts(w, { endpointId: e.endpoint.id });
        expect(log.map((a) => a.attempt)).toEqual(Array.from({ length: Math.min(failures.length + 1, MAX_DELIVERY_ATTEMPTS) }, (_, i) => i + 1));
        expect(new Set(log.map((a) => a.deliveryId))).toEqual(new Set([deliveryId]));
        // One event id and one body across every attempt.
        expect(new Set(w.net.sent.map((r) => `${r.headers['Esig-Event-Id']}|${r.body}`)).size).toBe(1);
        const health = (await endpointNow(w, e.endpoint))!;
        const gaveUp = failures.length >= MAX_DELIVERY_ATTEMPTS;
        expect([health.enabled, health.consecutiveFinalFailures, health.failingSince]).toEqual([true, gaveUp ? 1 : 0, gaveUp ? start : null]);
      }),
      { numRuns: 25 },
    );
  });

  it('gives up at once on any other 4xx', async () => {
    const final = fc.integer({ min: 400, max: 499 }).filter((s) => ![408, 425, 429].includes(s));
    await fc.assert(
      fc.asyncProperty(final, async (status) => {
        const w = world();
        const e = await endpoint(w);
        e.receiver.answer({ status, retryAfterS: 1 });
        await emit(w);
        await dispatchDue(w);
        const d = await deliverOne(w);
        expect(await delivery(w, d)).toMatchObject({ status: 'failed', attempts: 1, nextAttemptAt: null, lastOutcome: String(status) });
        expect(await claim(w, ['webhook.deliver'])).toEqual([]);
        expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: true, consecutiveFinalFailures: 1, failingSince: now(w) });
      }),
      { numRuns: 40 },
    );
  });

  it(`disables the endpoint after ${DISABLE_AFTER_FINAL_FAILURES} final failures in a row and cancels its waiting deliveries; a success resets the count`, async () => {
    expect(DISABLE_AFTER_FINAL_FAILURES).toBe(5);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }), async (successes) => {
        const w = world();
        const e = await endpoint(w);
        e.receiver.answer(...successes.map((ok) => (ok ? { status: 204 } : { status: 410 })));
        for (const _ of successes) await emit(w);
        await dispatchDue(w);
        const due = await dueDeliveries(w);
        let inARow = 0;
        let disabled = false;
        let reached = 0;
        for (const [i, { job, delivery: d }] of due.entries()) {
          await runOk(w, handleWebhookDeliver(w.deps), job);
          const status = (await delivery(w, d)).status;
          if (disabled) {
            expect(status).toBe('cancelled');
            continue;
          }
          expect(status).toBe(successes[i] ? 'succeeded' : 'failed');
          reached++;
          inARow = successes[i] ? 0 : inARow + 1;
          disabled = inARow >= DISABLE_AFTER_FINAL_FAILURES;
          const health = (await endpointNow(w, e.endpoint))!;
          expect([health.enabled, health.consecutiveFinalFailures]).toEqual([!disabled, inARow]);
          if (disabled) expect(health).toMatchObject({ disabledReason: `${DISABLE_AFTER_FINAL_FAILURES} deliveries in a row failed for good`, disabledAt: now(w) });
        }
        // Nothing reached the receiver once the endpoint was disabled.
        expect(e.receiver.received).toHaveLength(reached);
        expect(disabled).toBe(successes.join('').includes('false'.repeat(DISABLE_AFTER_FINAL_FAILURES)));
      }),
      { numRuns: 40 },
    );
  });

  it('disables an endpoint that has had nothing but failures for 3 days', async () => {
    expect(DISABLE_AFTER_FAILING_MS).toBe(3 * DAY);
    const w = world();
    const e = await endpoint(w);
    const start = now(w);
    e.receiver.answer(...Array.from({ length: 20 }, () => ({ status: 502 })));
    const failOnce = async () => {
      await emit(w);
      await dispatchDue(w);
      const due = await dueDeliveries(w);
      for (const { job } of due) await runOk(w, handleWebhookDeliver(w.deps), job);
      return due.map((x) => x.delivery);
    };
    const [first] = await failOnce();
    w.h.clock.advance(DISABLE_AFTER_FAILING_MS - 1);
    await failOnce();
    expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: true, failingSince: start, consecutiveFinalFailures: 0 });
    w.h.clock.advance(1);
    await failOnce();
    expect(await endpointNow(w, e.endpoint)).toMatchObject({ enabled: false, disabledReason: `nothing but failures since ${start}`, disabledAt: now(w) });
    expect((await delivery(w, first!)).status).toBe('cancelled');
  });

  it('cancels without sending a delivery whose endpoint was disabled or deleted behind its back', async () => {
    for (const how of ['disabled', 'deleted'] as const) {
      const w = world();
      const e = await endpoint(w);
      await emit(w);
      await dispatchDue(w);
      const { job, delivery: d } = await oneDue(w);
      // As a concurrent change leaves it, without cancelling the deliveries (the use cases do that too).
      const stored = (await endpointNow(w, e.endpoint))!;
      if (how === 'disabled') await right(w.h.stores.webhookEndpoints.update({ ...stored, enabled: false, version: stored.version + 1 }));
      else await right(w.h.stores.webhookEndpoints.delete(TENANT, e.endpoint.id));
      w.h.clock.advance(5000);
      await runOk(w, handleWebhookDeliver(w.deps), job);
      expect(w.net.sent).toEqual([]);
      expect(await delivery(w, d)).toMatchObject({ status: 'cancelled', nextAttemptAt: null, lastAttemptAt: now(w), attempts: 0 });
      expect(await attempts(w)).toEqual([]);
    }
  });

  it('a delivery cancelled while its attempt was out records nothing, and is not sent again', async () => {
    const w = world();
    const e = await endpoint(w);
    await emit(w);
    await dispatchDue(w);
    const { job, delivery: d } = await oneDue(w);
    const command = await right(handleWebhookDeliver(w.deps)(job));
    await right(update(w, e.endpoint.id, { enabled: false }));
    expect(await commit(w, command)).toMatchObject({ _tag: 'Left', left: { _tag: 'ConcurrentModification' } });
    expect((await delivery(w, d)).status).toBe('cancelled');
    // The worker retries the job: now there is nothing left to do.
    expect(E.isRight(await runJob(w, handleWebhookDeliver(w.deps), job))).toBe(true);
    expect(e.receiver.received).toHaveLength(1);
  });
});

describe('handleWebhookDeliver: a slow endpoint holds only its share of the loops', () => {
  /**
   * A deliver handler whose gate lets a slow endpoint hold one delivery at a time, over a sender that holds each
   * delivery until the test lets it go (in flight, as on a slow network). `held` are the waiting ones, oldest first.
   */
  const gated = (w: World) => {
    const held: Array<() => void> = [];
    const sender = { ...w.net.sender, send: (r: Parameters<typeof w.net.sender.send>[0]) => () => new Promise<void>((go) => held.push(go)).then(w.net.sender.send(r)) };
    const deliver = handleWebhookDeliver({ ...w.deps, sender, receiverGate: createReceiverGate({ share: 1, maxWaitMs: DELIVERY_TIMEOUT_MS }) });
    const inFlight = async (n: number) => {
      while (held.length < n) await new Promise((r) => setTimeout(r, 1));
    };
    /** Lets the oldest held delivery go on, once there is one. */
    const release = async () => {
      await inFlight(1);
      held.shift()!();
    };
    return { deliver, held, inFlight, release };
  };

  it('puts off a delivery past the share: nothing sent, no attempt, a new job when a slot should be free, and it is delivered then', async () => {
    const w = world();
    const e = await endpoint(w);
    const { deliver, held, inFlight: waitInFlight, release } = gated(w);

    e.receiver.answer({ noAnswer: 'timeout' });
    await emit(w);
    const first = (await oneDue(w)).job;
    const ran = runOk(w, deliver, first);
    await release();
    await ran;
    expect(e.receiver.received).toHaveLength(1);

    await emit(w);
    await emit(w);
    const [a, b] = await dueDeliveries(w);
    const inFlight = runOk(w, deliver, a!.job);
    await waitInFlight(1);
    const sentBefore = w.net.sent.length;
    await runOk(w, deliver, b!.job);
    // Put off: nothing sent, nothing logged, still pending with no attempt, its next attempt later.
    expect(w.net.sent).toHaveLength(sentBefore);
    expect(held).toHaveLength(1);
    expect(await attempts(w, { eventId: b!.delivery.eventId })).toEqual([]);
    const waiting = await delivery(w, b!.delivery);
    const put = Date.parse(waiting.nextAttemptAt!) - w.h.clock.now().getTime();
    // The last delivery took the whole timeout and the one in flight has just started: it should end in that
    // long, and the put-off delivery goes a quarter of a second after.
    expect(put).toBe(DELIVERY_TIMEOUT_MS + 250);
    expect(waiting).toMatchObject({ status: 'pending', attempts: 0, version: b!.delivery.version + 1 });
    // Its job is done, and a new one falls due then (nothing due now).
    expect(await claim(w, ['webhook.deliver'], now(w))).toEqual([]);
    await release();
    await inFlight;

    w.h.clock.advance(put);
    const [again, ...rest] = await dueDeliveries(w);
    expect(rest).toEqual([]);
    expect(again!.delivery.id).toBe(b!.delivery.id);
    const last = runOk(w, deliver, again!.job);
    await release();
    await last;
    expect(await delivery(w, b!.delivery)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(e.receiver.received.at(-1)!.request.headers['Esig-Attempt']).toBe('1');
  });

  it('holds endpoints that point at one URL to one share: the receiver is the URL', async () => {
    const w = world();
    const one = await endpoint(w);
    const { deliver, release, inFlight } = gated(w);
    one.receiver.answer({ noAnswer: 'timeout' });
    await emit(w);
    const first = runOk(w, deliver, (await oneDue(w)).job);
    await release();
    await first;
    // A second endpoint, of the same org, at the same URL (the receiver now knows both secrets).
    const two = await right(pipe(createWebhookEndpoint(w.deps)(w.p, { url: one.endpoint.url, events: ['request.completed'] }), TE.chainW(w.run)));
    one.receiver.secrets = [one.secret, two.secret];
    await emit(w);
    const [a, b] = await dueDeliveries(w);
    expect(new Set([a!.delivery.endpointId, b!.delivery.endpointId])).toEqual(new Set([one.endpoint.id, two.endpoint.id]));
    const running = runOk(w, deliver, a!.job);
    await inFlight(1);
    const sentBefore = w.net.sent.length;
    await runOk(w, deliver, b!.job);
    expect(w.net.sent).toHaveLength(sentBefore);
    expect(await delivery(w, b!.delivery)).toMatchObject({ status: 'pending', attempts: 0 });
    await release();
    await running;
  });

  it.each([
    ['its task throws at once', (real: WebhookSender): WebhookSender => ({ ...real, send: () => () => { throw new Error('sender bug'); } })],
    ['send(...) itself throws', (real: WebhookSender): WebhookSender => ({ ...real, send: () => { throw new Error('sender bug'); } })],
    ['its task rejects', (real: WebhookSender): WebhookSender => ({ ...real, send: () => async () => { throw new Error('sender bug'); } })],
  ])('a sender bug (%s) leaves no slot taken: the receiver is not held back afterwards', async (_what, buggy) => {
    const w = world();
    const e = await endpoint(w);
    let broken = true;
    const real = w.net.sender;
    const bug = buggy(real);
    const sender: WebhookSender = { ...real, send: (r) => (broken ? bug.send(r) : real.send(r)) };
    const deliver = handleWebhookDeliver({ ...w.deps, sender, receiverGate: createReceiverGate({ share: 1, maxWaitMs: DELIVERY_TIMEOUT_MS }) });
    await emit(w);
    const first = (await oneDue(w)).job;
    // The throw reaches the caller (the worker counts it as this run's failure and retries the job later).
    await expect(runJob(w, deliver, first)).rejects.toThrow('sender bug');
    broken = false;
    // An hour later the sender works: a new delivery is sent, not put off behind a slot never given back.
    w.h.clock.advance(3_600_000);
    await emit(w);
    const fresh = (await dueDeliveries(w)).find((x) => x.job.id !== first.id)!;
    await runOk(w, deliver, fresh.job);
    expect(e.receiver.received).toHaveLength(1);
  });

  it('does not hold back an endpoint that answers quickly', async () => {
    const w = world();
    await endpoint(w);
    const { deliver, held, inFlight } = gated(w);
    for (let i = 0; i < 4; i++) await emit(w);
    const due = await dueDeliveries(w);
    const runs = due.map(({ job }) => runOk(w, deliver, job));
    // All four are in flight at once: none was put off.
    await inFlight(4);
    held.forEach((go) => go());
    await Promise.all(runs);
    for (const { delivery: d } of due) expect(await delivery(w, d)).toMatchObject({ status: 'succeeded', attempts: 1 });
  });
});
