import { describe, expect, it } from 'vitest';
import { MAX_INLINE_FANOUT } from '@esig/core';
import { recordEvent, webhookBody } from '@esig/core/internal';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, createMemoryStores, createSequentialIds, makeEvent, makeWebhookEndpoint, ok } from '@esig/testkit';

/** Every job due by 2100, of any kind. */
const queued = async (stores: ReturnType<typeof createMemoryStores>['stores']) =>
  ok(stores.jobs.claim(['webhook.dispatch', 'webhook.deliver'], 'w', '2100-01-01T00:00:00.000Z', '2100-01-01T00:01:00.000Z', 100));

const subscribers = async (stores: ReturnType<typeof createMemoryStores>['stores'], n: number) => {
  const made = Array.from({ length: n }, () => makeWebhookEndpoint(TENANT_A, { events: ['request.completed'] }));
  for (const e of made) await ok(stores.webhookEndpoints.insert(e));
  return made;
};

describe('recordEvent', () => {
  it('queues no webhook work for an org and mode without a subscribed, enabled endpoint', async () => {
    const { stores, uow } = createMemoryStores();
    const ids = createSequentialIds();
    // Endpoints that must not count: another org, the other mode, another event type, a disabled one.
    for (const e of [
      makeWebhookEndpoint(TENANT_B),
      makeWebhookEndpoint(TENANT_A_LIVE),
      makeWebhookEndpoint(TENANT_A, { events: ['request.sent'] }),
      makeWebhookEndpoint(TENANT_A, { enabled: false, disabledReason: 'off', disabledAt: '2026-01-01T00:00:00.000Z' }),
    ])
      await ok(stores.webhookEndpoints.insert(e));
    const event = makeEvent(TENANT_A, { type: 'request.completed' });
    await ok(uow.transaction((tx) => recordEvent(tx, ids, event)));
    expect(await ok(stores.events.findById(TENANT_A, event.id))).not.toBeNull();
    expect(await queued(stores)).toEqual([]);
  });

  it(`writes each subscriber's delivery and its first attempt's job in the same transaction, up to ${MAX_INLINE_FANOUT} subscribers`, async () => {
    const { stores, uow } = createMemoryStores();
    const ids = createSequentialIds();
    const endpoints = await subscribers(stores, MAX_INLINE_FANOUT);
    const event = makeEvent(TENANT_A, { type: 'request.completed' });
    await ok(uow.transaction((tx) => recordEvent(tx, ids, event)));
    const jobs = await queued(stores);
    // No dispatch job: the deliveries exist already, each with its first attempt due at the event's time.
    expect(jobs.map((j) => [j.kind, j.runAt, j.orgId, j.mode])).toEqual(endpoints.map(() => ['webhook.deliver', event.createdAt, TENANT_A.orgId, TENANT_A.mode]));
    const deliveries = await Promise.all(
      jobs.map(async (j) => (await ok(stores.webhookDeliveries.findById(TENANT_A, j.kind === 'webhook.deliver' ? j.payload.deliveryId : 'not a delivery')))!),
    );
    expect(deliveries.map((d) => d.endpointId).sort()).toEqual(endpoints.map((e) => e.id).sort());
    for (const [i, d] of deliveries.entries()) {
      expect(d).toMatchObject({ eventId: event.id, eventType: event.type, status: 'pending', attempts: 0, nextAttemptAt: event.createdAt, body: webhookBody(event) });
      expect(jobs[i]!.dedupeKey).toBe(`deliver:${d.id}:1`);
    }
  });

  it(`queues one dispatch job instead, in the same transaction, for more than ${MAX_INLINE_FANOUT} subscribers`, async () => {
    const { stores, uow } = createMemoryStores();
    const ids = createSequentialIds();
    await subscribers(stores, MAX_INLINE_FANOUT + 1);
    const event = makeEvent(TENANT_A, { type: 'request.completed' });
    await ok(uow.transaction((tx) => recordEvent(tx, ids, event)));
    const jobs = await queued(stores);
    expect(jobs.map((j) => [j.kind, j.payload, j.orgId, j.mode, j.dedupeKey])).toEqual([['webhook.dispatch', { eventId: event.id }, TENANT_A.orgId, TENANT_A.mode, `dispatch:${event.id}`]]);
  });

  it('writes nothing when the transaction rolls back: no event, no delivery, no job', async () => {
    const { stores, uow } = createMemoryStores();
    const ids = createSequentialIds();
    await subscribers(stores, 1);
    const event = makeEvent(TENANT_A, { type: 'request.completed' });
    const { pipe } = await import('fp-ts/lib/function.js');
    const TE = await import('fp-ts/lib/TaskEither.js');
    const failed = await uow.transaction((tx) => pipe(recordEvent(tx, ids, event), TE.chainW(() => TE.left({ _tag: 'Conflict' as const, detail: 'later step failed' }))))();
    expect(failed._tag).toBe('Left');
    expect(await ok(stores.events.findById(TENANT_A, event.id))).toBeNull();
    expect(await queued(stores)).toEqual([]);
  });
});
