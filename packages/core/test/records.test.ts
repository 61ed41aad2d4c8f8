import { describe, expect, it } from 'vitest';
import { recordEvent } from '@esig/core/internal';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, createMemoryStores, createSequentialIds, makeEvent, makeWebhookEndpoint, ok } from '@esig/testkit';

const dispatchJobs = async (stores: ReturnType<typeof createMemoryStores>['stores']) =>
  ok(stores.jobs.claim(['webhook.dispatch'], 'w', '2100-01-01T00:00:00.000Z', '2100-01-01T00:01:00.000Z', 100));

describe('recordEvent', () => {
  it('queues no dispatch work for an org and mode without a subscribed, enabled endpoint', async () => {
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
    expect(await dispatchJobs(stores)).toEqual([]);
  });

  it('queues one dispatch job, in the same transaction, when an endpoint subscribes', async () => {
    const { stores, uow } = createMemoryStores();
    const ids = createSequentialIds();
    await ok(stores.webhookEndpoints.insert(makeWebhookEndpoint(TENANT_A, { events: ['request.completed'] })));
    const event = makeEvent(TENANT_A, { type: 'request.completed' });
    await ok(uow.transaction((tx) => recordEvent(tx, ids, event)));
    const jobs = await dispatchJobs(stores);
    expect(jobs.map((j) => [j.kind, j.payload, j.orgId, j.mode])).toEqual([['webhook.dispatch', { eventId: event.id }, TENANT_A.orgId, TENANT_A.mode]]);
  });
});
