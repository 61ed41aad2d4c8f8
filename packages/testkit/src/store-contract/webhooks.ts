import type { ApiLogEntry, AttemptFilter, DeliveryAttempt, StoreError, Stores, Tenant, WebhookDelivery, WebhookEndpoint } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { describe, expect, it } from 'vitest';
import {
  TENANT_A,
  TENANT_A_LIVE,
  TENANT_B,
  at,
  fails,
  makeAttempt,
  makeDelivery,
  makeEvent,
  makeLogEntry,
  makeWebhookEndpoint,
  ok,
  tagOf,
} from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS, pause } from './harness.js';
import { cycle, describePaging } from './paging.js';

const everything = { limit: 100, order: 'asc', after: null } as const;

/** Disabled as the delivery worker disables an endpoint. */
const disabled = (e: WebhookEndpoint, version = e.version + 1): WebhookEndpoint => ({
  ...e,
  enabled: false,
  disabledReason: '5 deliveries in a row failed for good',
  disabledAt: at(500),
  updatedAt: at(500),
  version,
});

export const webhookEndpointsContract = (h: Harness) => {
  describe('webhookEndpoints', () => {
    const s = () => h().stores.webhookEndpoints;
    const insert = (...es: WebhookEndpoint[]) => Promise.all(es.map((e) => ok(s().insert(e))));

    it('round-trips every field: secrets with and without retiresAt, optional fields set and null', async () => {
      const full = makeWebhookEndpoint(TENANT_A, {
        ...disabled(makeWebhookEndpoint(TENANT_A), 7),
        consecutiveFinalFailures: 5,
        failingSince: at(60.25),
        createdAt: at(1),
      });
      const bare = makeWebhookEndpoint(TENANT_A, {
        events: [],
        description: null,
        secrets: [{ sealed: 'sealed:only', createdAt: at(2), retiresAt: null }],
        createdAt: at(2),
        updatedAt: at(2),
      });
      await insert(full, bare);
      for (const e of [full, bare]) {
        expect(await ok(s().findById(TENANT_A, e.id))).toEqual(e);
        expect(await ok(s().findByIdForUpdate(TENANT_A, e.id))).toEqual(e);
      }
      expect((await ok(s().list(TENANT_A, { ...everything, filter: undefined }))).items).toEqual([full, bare]);
    });

    it('refuses a second endpoint with a taken id, from any tenant, and keeps the first', async () => {
      const first = makeWebhookEndpoint(TENANT_A);
      await insert(first);
      for (const t of [TENANT_A, ...STRANGERS])
        expect(tagOf(await fails(s().insert(makeWebhookEndpoint(t, { id: first.id, url: 'https://evil.example/' }))))).toBe('ConcurrentModification');
      expect(await ok(s().findById(TENANT_A, first.id))).toEqual(first);
    });

    it('findById and findByIdForUpdate find nothing for an unknown id, another org or the other mode', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      expect(await ok(s().findById(TENANT_A, 'whe_unknown'))).toBeNull();
      expect(await ok(s().findByIdForUpdate(TENANT_A, 'whe_unknown'))).toBeNull();
      for (const t of STRANGERS) {
        expect(await ok(s().findById(t, e.id))).toBeNull();
        expect(await ok(s().findByIdForUpdate(t, e.id))).toBeNull();
      }
    });

    it('update replaces every changeable field when the stored version is next.version - 1', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      const next: WebhookEndpoint = {
        ...e,
        url: 'https://other.example/hooks',
        events: ['signer.signed'],
        description: null,
        enabled: false,
        disabledReason: 'disabled through the API',
        disabledAt: at(90),
        secrets: [{ sealed: 'sealed:new', createdAt: at(90), retiresAt: null }, { ...e.secrets[0]!, retiresAt: at(86_490) }],
        consecutiveFinalFailures: 3,
        failingSince: at(80),
        updatedAt: at(90),
        version: 2,
      };
      await ok(s().update(next));
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual(next);
      const healthy: WebhookEndpoint = { ...next, enabled: true, disabledReason: null, disabledAt: null, consecutiveFinalFailures: 0, failingSince: null, version: 3 };
      await ok(s().update(healthy));
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual(healthy);
    });

    it('update with a stale, skipped or same version, or an unknown id, fails with ConcurrentModification and writes nothing', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      const v2 = { ...e, url: 'https://v2.example/', version: 2 };
      await ok(s().update(v2));
      for (const stale of [{ ...e, url: 'https://stale.example/', version: 2 }, { ...e, version: 4 }, { ...e, version: 1 }])
        expect(tagOf(await fails(s().update(stale)))).toBe('ConcurrentModification');
      expect(tagOf(await fails(s().update({ ...e, id: 'whe_unknown', version: 2 })))).toBe('ConcurrentModification');
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual(v2);
    });

    it("update cannot reach another org's or mode's endpoint", async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      for (const t of STRANGERS) {
        expect(tagOf(await fails(s().update({ ...e, orgId: t.orgId, mode: t.mode, url: 'https://evil.example/', version: 2 })))).toBe(
          'ConcurrentModification',
        );
        expect(await ok(s().findById(t, e.id))).toBeNull();
      }
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual(e);
    });

    it('delete removes the endpoint of its own tenant only, and says whether there was one', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      const kept = makeWebhookEndpoint(TENANT_A);
      await insert(e, kept);
      for (const t of STRANGERS) expect(await ok(s().delete(t, e.id))).toBe(false);
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual(e);
      expect(await ok(s().delete(TENANT_A, e.id))).toBe(true);
      expect(await ok(s().findById(TENANT_A, e.id))).toBeNull();
      expect(await ok(s().findSubscribed(TENANT_A, 'request.sent'))).toEqual([kept]);
      expect((await ok(s().list(TENANT_A, { ...everything, filter: undefined }))).items).toEqual([kept]);
      expect(await ok(s().delete(TENANT_A, e.id))).toBe(false);
      expect(await ok(s().delete(TENANT_A, 'whe_unknown'))).toBe(false);
    });

    it('findSubscribed: the enabled endpoints of the tenant whose events include the type, oldest first', async () => {
      // Insertion, time and id orders all differ, and two share a createdAt (the id breaks the tie).
      const a = makeWebhookEndpoint(TENANT_A, { createdAt: at(3), events: ['request.sent'] });
      const b = makeWebhookEndpoint(TENANT_A, { createdAt: at(1), events: ['request.completed', 'request.sent'] });
      const c = makeWebhookEndpoint(TENANT_A, { createdAt: at(3), events: ['signer.signed', 'request.sent'] });
      const off = disabled(makeWebhookEndpoint(TENANT_A, { createdAt: at(0), events: ['request.sent', 'request.completed'] }), 1);
      const other = makeWebhookEndpoint(TENANT_A, { createdAt: at(0.5), events: ['request.completed'] });
      const none = makeWebhookEndpoint(TENANT_A, { createdAt: at(0.25), events: [] });
      const strangers = STRANGERS.map((t) => makeWebhookEndpoint(t, { createdAt: at(0), events: ['request.sent'] }));
      for (const e of [c, other, a, off, none, b, ...strangers]) await insert(e);

      expect(await ok(s().findSubscribed(TENANT_A, 'request.sent'))).toEqual([b, a, c]);
      expect(await ok(s().findSubscribed(TENANT_A, 'request.completed'))).toEqual([other, b]);
      expect(await ok(s().findSubscribed(TENANT_A, 'signer.signed'))).toEqual([c]);
      expect(await ok(s().findSubscribed(TENANT_A, 'payment.paid'))).toEqual([]);
      for (const [i, t] of STRANGERS.entries()) {
        expect(await ok(s().findSubscribed(t, 'request.sent'))).toEqual([strangers[i]]);
        expect(await ok(s().findSubscribed(t, 'request.completed'))).toEqual([]);
      }

      // Updates move endpoints in and out: disabling, enabling, changing the events.
      const bOff = disabled(b);
      const offOn: WebhookEndpoint = { ...off, enabled: true, disabledReason: null, disabledAt: null, version: 2 };
      const aMoved: WebhookEndpoint = { ...a, events: ['signer.signed'], version: 2 };
      for (const next of [bOff, offOn, aMoved]) await ok(s().update(next));
      expect(await ok(s().findSubscribed(TENANT_A, 'request.sent'))).toEqual([offOn, c]);
      expect(await ok(s().findSubscribed(TENANT_A, 'signer.signed'))).toEqual([aMoved, c]);
    });

    it('clearFailures resets a failing endpoint with a new version, and leaves a healthy one, a stranger and an unknown id as they are', async () => {
      const failing = makeWebhookEndpoint(TENANT_A, { consecutiveFinalFailures: 3, failingSince: at(10), updatedAt: at(10), version: 4 });
      const countedOnly = makeWebhookEndpoint(TENANT_A, { consecutiveFinalFailures: 1, failingSince: null, version: 2 });
      const sinceOnly = makeWebhookEndpoint(TENANT_A, { consecutiveFinalFailures: 0, failingSince: at(20), version: 3 });
      const healthy = makeWebhookEndpoint(TENANT_A);
      await insert(failing, countedOnly, sinceOnly, healthy);
      // Another tenant cannot clear this one's failures.
      for (const t of STRANGERS) expect(await ok(s().clearFailures(t, failing.id, at(50)))).toBeUndefined();
      expect(await ok(s().findById(TENANT_A, failing.id))).toEqual(failing);
      for (const e of [failing, countedOnly, sinceOnly]) {
        expect(await ok(s().clearFailures(TENANT_A, e.id, at(60)))).toBeUndefined();
        expect(await ok(s().findById(TENANT_A, e.id))).toEqual({ ...e, consecutiveFinalFailures: 0, failingSince: null, updatedAt: at(60), version: e.version + 1 });
        // Healthy now: a second success changes nothing, not even the version.
        expect(await ok(s().clearFailures(TENANT_A, e.id, at(70)))).toBeUndefined();
        expect((await ok(s().findById(TENANT_A, e.id)))?.version).toBe(e.version + 1);
      }
      expect(await ok(s().clearFailures(TENANT_A, healthy.id, at(60)))).toBeUndefined();
      expect(await ok(s().findById(TENANT_A, healthy.id))).toEqual(healthy);
      expect(await ok(s().clearFailures(TENANT_A, 'whe_unknown', at(60)))).toBeUndefined();
      expect(await ok(s().findById(TENANT_A, 'whe_unknown'))).toBeNull();
    });

    it('clearFailures inside a transaction decides on the row as committed when it runs, not as it was when the transaction began', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      // A failure is counted and committed while a success's transaction is already open (on PostgreSQL; a
      // serial store runs the success after it): the success's statement still sees the failure, and clears it.
      let committed!: () => void;
      const failureCommitted = new Promise<void>((r) => (committed = r));
      const failure = h()
        .uow.transaction((tx) =>
          pipe(
            tx.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id),
            TE.chainW((cur): TE.TaskEither<StoreError | 'vanished', void> =>
              cur === null ? TE.left('vanished' as const) : tx.webhookEndpoints.update({ ...cur, consecutiveFinalFailures: 1, failingSince: at(100), updatedAt: at(100), version: cur.version + 1 }),
            ),
          ),
        )()
        .then((r) => (committed(), r));
      // Begun a turn later: a store that commits the transactions of one turn together (SQLite) would hold the
      // failure's commit for the success, which waits for it.
      await new Promise((r) => setImmediate(r));
      const success = h().uow.transaction((tx) =>
        pipe(
          TE.rightTask(() => failureCommitted),
          TE.chain(() => tx.webhookEndpoints.clearFailures(TENANT_A, e.id, at(200))),
        ),
      )();
      expect(await failure).toEqual(E.right(undefined));
      expect(await success).toEqual(E.right(undefined));
      expect(await ok(s().findById(TENANT_A, e.id))).toEqual({ ...e, consecutiveFinalFailures: 0, failingSince: null, updatedAt: at(200), version: e.version + 2 });
    });

    it('findByIdForUpdate inside a transaction returns the row of its tenant only', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      expect(await ok(h().uow.transaction((tx) => tx.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id)))).toEqual(e);
      for (const t of STRANGERS) expect(await ok(h().uow.transaction((tx) => tx.webhookEndpoints.findByIdForUpdate(t, e.id)))).toBeNull();
    });

    it('concurrent transactions that each findByIdForUpdate then update one endpoint all commit, one after another', async () => {
      const e = makeWebhookEndpoint(TENANT_A);
      await insert(e);
      const N = 4;
      // As the delivery worker records an endpoint's health: read under the lock, yield (so the others
      // run and ask for the row meanwhile), then write the next version.
      const recordFailure = (i: number) =>
        h().uow.transaction((tx) =>
          pipe(
            TE.rightTask(pause(i)),
            TE.chain(() => tx.webhookEndpoints.findByIdForUpdate(TENANT_A, e.id)),
            TE.chainFirstTaskK(() => pause(15)),
            TE.chainW((cur): TE.TaskEither<StoreError | 'vanished', void> =>
              cur === null
                ? TE.left('vanished' as const)
                : tx.webhookEndpoints.update({
                    ...cur,
                    consecutiveFinalFailures: cur.consecutiveFinalFailures + 1,
                    failingSince: cur.failingSince ?? at(100 + i),
                    updatedAt: at(100 + i),
                    version: cur.version + 1,
                  }),
            ),
          ),
        )();
      const results = await Promise.all(Array.from({ length: N }, (_, i) => recordFailure(i)));
      expect(results).toEqual(Array.from({ length: N }, () => E.right(undefined)));
      const final = await ok(s().findById(TENANT_A, e.id));
      expect(final?.consecutiveFinalFailures).toBe(N);
      expect(final?.version).toBe(e.version + N);
    });
  });

  describePaging<WebhookEndpoint, undefined>(h, {
    name: 'webhookEndpoints',
    make: (t, createdAt) => makeWebhookEndpoint(t, { createdAt }),
    insert: (s, e) => s.webhookEndpoints.insert(e),
    list: (s, t, q) => s.webhookEndpoints.list(t, q),
    all: undefined,
    filters: [],
  });
};

export const webhookDeliveriesContract = (h: Harness) => {
  describe('webhookDeliveries', () => {
    const s = () => h().stores.webhookDeliveries;
    const insert = (...ds: WebhookDelivery[]) => Promise.all(ds.map((d) => ok(s().insert(d))));

    it('round-trips every field of a waiting delivery and of a finished one', async () => {
      const waiting = makeDelivery(TENANT_A);
      const finished = makeDelivery(TENANT_A_LIVE, {
        eventType: 'webhook.test',
        body: '{"id":"evt_x","type":"webhook.test","data":{}}',
        status: 'failed',
        attempts: 8,
        nextAttemptAt: null,
        lastAttemptAt: at(54_000.5),
        lastOutcome: 'timeout',
        createdAt: at(3),
        version: 9,
      });
      await insert(waiting, finished);
      expect(await ok(s().findById(TENANT_A, waiting.id))).toEqual(waiting);
      expect(await ok(s().findById(TENANT_A_LIVE, finished.id))).toEqual(finished);
    });

    it('refuses a second delivery with a taken id, from any tenant, and keeps the first', async () => {
      const first = makeDelivery(TENANT_A);
      await insert(first);
      for (const t of [TENANT_A, ...STRANGERS])
        expect(tagOf(await fails(s().insert(makeDelivery(t, { id: first.id, body: 'other' }))))).toBe('ConcurrentModification');
      expect(await ok(s().findById(TENANT_A, first.id))).toEqual(first);
    });

    it('findById finds nothing for an unknown id, another org or the other mode', async () => {
      const d = makeDelivery(TENANT_A);
      await insert(d);
      expect(await ok(s().findById(TENANT_A, 'dlv_unknown'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(s().findById(t, d.id))).toBeNull();
    });

    it('findWithEndpoint reads the delivery and its endpoint as findById reads each, every field, at top level and inside a transaction', async () => {
      const full = makeWebhookEndpoint(TENANT_A, { ...disabled(makeWebhookEndpoint(TENANT_A), 7), consecutiveFinalFailures: 5, failingSince: at(60.25) });
      const bare = makeWebhookEndpoint(TENANT_A_LIVE, { events: [], description: null, secrets: [{ sealed: 'sealed:only', createdAt: at(2), retiresAt: null }] });
      await ok(h().stores.webhookEndpoints.insert(full));
      await ok(h().stores.webhookEndpoints.insert(bare));
      const waiting = makeDelivery(TENANT_A, { endpointId: full.id });
      const finished = makeDelivery(TENANT_A_LIVE, { endpointId: bare.id, status: 'failed', attempts: 8, nextAttemptAt: null, lastAttemptAt: at(54_000.5), lastOutcome: 'timeout', version: 9 });
      await insert(waiting, finished);
      expect(await ok(s().findWithEndpoint(TENANT_A, waiting.id))).toEqual({ delivery: waiting, endpoint: full });
      expect(await ok(s().findWithEndpoint(TENANT_A_LIVE, finished.id))).toEqual({ delivery: finished, endpoint: bare });
      expect(await ok(h().uow.transaction((tx) => tx.webhookDeliveries.findWithEndpoint(TENANT_A, waiting.id)))).toEqual({ delivery: waiting, endpoint: full });
    });

    it("findWithEndpoint gives a null endpoint for one that is gone or another tenant's, and nothing for an unknown id, another org or the other mode", async () => {
      const theirs = makeWebhookEndpoint(STRANGERS[0]!);
      const deleted = makeWebhookEndpoint(TENANT_A);
      await ok(h().stores.webhookEndpoints.insert(theirs));
      await ok(h().stores.webhookEndpoints.insert(deleted));
      await ok(h().stores.webhookEndpoints.delete(TENANT_A, deleted.id));
      const toTheirs = makeDelivery(TENANT_A, { endpointId: theirs.id });
      const toDeleted = makeDelivery(TENANT_A, { endpointId: deleted.id });
      await insert(toTheirs, toDeleted);
      expect(await ok(s().findWithEndpoint(TENANT_A, toTheirs.id))).toEqual({ delivery: toTheirs, endpoint: null });
      expect(await ok(s().findWithEndpoint(TENANT_A, toDeleted.id))).toEqual({ delivery: toDeleted, endpoint: null });
      expect(await ok(s().findWithEndpoint(TENANT_A, 'dlv_unknown'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(s().findWithEndpoint(t, toTheirs.id))).toBeNull();
    });

    it('findWithEndpoint asked many times at once answers each call as it would alone: its own delivery, in its own tenant', async () => {
      // A store may answer the lookups made at the same moment together (PostgreSQL: one statement for the job
      // loops that start together); each must still get its own answer.
      const endpoint = makeWebhookEndpoint(TENANT_A);
      const live = makeWebhookEndpoint(TENANT_A_LIVE);
      const gone = makeWebhookEndpoint(TENANT_A);
      for (const e of [endpoint, live, gone]) await ok(h().stores.webhookEndpoints.insert(e));
      await ok(h().stores.webhookEndpoints.delete(TENANT_A, gone.id));
      const first = makeDelivery(TENANT_A, { endpointId: endpoint.id });
      const second = makeDelivery(TENANT_A, { endpointId: endpoint.id, attempts: 2, version: 3 });
      const inLive = makeDelivery(TENANT_A_LIVE, { endpointId: live.id });
      const toGone = makeDelivery(TENANT_A, { endpointId: gone.id });
      await insert(first, second, inLive, toGone);
      const asked: Array<[Tenant, string, { delivery: WebhookDelivery; endpoint: WebhookEndpoint | null } | null]> = [
        [TENANT_A, first.id, { delivery: first, endpoint }],
        [TENANT_A_LIVE, first.id, null],
        [TENANT_A, second.id, { delivery: second, endpoint }],
        [TENANT_A_LIVE, inLive.id, { delivery: inLive, endpoint: live }],
        [TENANT_A, inLive.id, null],
        [TENANT_A, toGone.id, { delivery: toGone, endpoint: null }],
        [TENANT_A, 'dlv_unknown', null],
        ...STRANGERS.map((t): [Tenant, string, null] => [t, second.id, null]),
        [TENANT_A, first.id, { delivery: first, endpoint }],
      ];
      const answers = await Promise.all(asked.map(([t, id]) => ok(s().findWithEndpoint(t, id))));
      expect(answers).toEqual(asked.map(([, , want]) => want));
    });

    it("update writes the delivery's state when the stored version is next.version - 1, and keeps what was fixed at creation", async () => {
      const d = makeDelivery(TENANT_A);
      await insert(d);
      const retrying: WebhookDelivery = { ...d, attempts: 1, nextAttemptAt: at(60), lastAttemptAt: at(1), lastOutcome: '503', version: 2 };
      await ok(s().update(retrying));
      expect(await ok(s().findById(TENANT_A, d.id))).toEqual(retrying);
      const done: WebhookDelivery = { ...retrying, status: 'succeeded', attempts: 2, nextAttemptAt: null, lastAttemptAt: at(61), lastOutcome: '200', version: 3 };
      await ok(
        s().update({ ...done, endpointId: 'whe_other', eventId: 'evt_other', eventType: 'signer.signed', body: 'tampered', createdAt: at(99) }),
      );
      expect(await ok(s().findById(TENANT_A, d.id))).toEqual(done);
    });

    it('update with a stale, skipped or same version, or an unknown id, fails with ConcurrentModification and writes nothing', async () => {
      const d = makeDelivery(TENANT_A);
      await insert(d);
      const v2 = { ...d, attempts: 1, version: 2 };
      await ok(s().update(v2));
      for (const stale of [{ ...d, status: 'succeeded' as const, version: 2 }, { ...d, version: 4 }, { ...d, version: 1 }])
        expect(tagOf(await fails(s().update(stale)))).toBe('ConcurrentModification');
      expect(tagOf(await fails(s().update({ ...d, id: 'dlv_unknown', version: 2 })))).toBe('ConcurrentModification');
      expect(await ok(s().findById(TENANT_A, d.id))).toEqual(v2);
    });

    it("update cannot reach another org's or mode's delivery", async () => {
      const d = makeDelivery(TENANT_A);
      await insert(d);
      for (const t of STRANGERS) {
        expect(tagOf(await fails(s().update({ ...d, orgId: t.orgId, mode: t.mode, status: 'cancelled', version: 2 })))).toBe('ConcurrentModification');
        expect(await ok(s().findById(t, d.id))).toBeNull();
      }
      expect(await ok(s().findById(TENANT_A, d.id))).toEqual(d);
    });

    it('cancelPending cancels the pending deliveries of that endpoint in that tenant only, and counts them', async () => {
      const endpointId = 'whe_GOING';
      const fresh = makeDelivery(TENANT_A, { endpointId });
      const retrying = makeDelivery(TENANT_A, { endpointId, attempts: 3, nextAttemptAt: at(900), lastAttemptAt: at(300), lastOutcome: '500', version: 4 });
      const finished = (['succeeded', 'failed', 'cancelled'] as const).map((status) =>
        makeDelivery(TENANT_A, { endpointId, status, attempts: 1, nextAttemptAt: null, lastAttemptAt: at(5), lastOutcome: status === 'succeeded' ? '200' : '410' }),
      );
      const otherEndpoint = makeDelivery(TENANT_A, { endpointId: 'whe_STAYING' });
      const [strangerB, strangerLive] = STRANGERS.map((t) => makeDelivery(t, { endpointId })) as [WebhookDelivery, WebhookDelivery];
      const untouched = [...finished, otherEndpoint];
      await insert(fresh, retrying, ...untouched, strangerB, strangerLive);

      const find = async (d: WebhookDelivery) => ok(s().findById(d, d.id));
      const cancelled = (d: WebhookDelivery, at: string): WebhookDelivery => ({ ...d, status: 'cancelled', nextAttemptAt: null, lastAttemptAt: d.lastAttemptAt ?? at, version: d.version + 1 });

      expect(await ok(s().cancelPending(TENANT_A, endpointId, at(1000)))).toBe(2);
      expect(await find(fresh)).toEqual(cancelled(fresh, at(1000)));
      expect(await find(retrying)).toEqual(cancelled(retrying, at(1000)));
      expect((await find(retrying))?.lastAttemptAt).toBe(at(300));
      for (const d of [...untouched, strangerB, strangerLive]) expect(await find(d)).toEqual(d);
      expect(await ok(s().cancelPending(TENANT_A, endpointId, at(1001)))).toBe(0);
      expect(await find(fresh)).toEqual(cancelled(fresh, at(1000)));

      expect(await ok(s().cancelPending(TENANT_B, endpointId, at(2000)))).toBe(1);
      expect(await find(strangerB)).toEqual(cancelled(strangerB, at(2000)));
      expect(await find(strangerLive)).toEqual(strangerLive);
      expect(await ok(s().cancelPending(TENANT_A_LIVE, endpointId, at(3000)))).toBe(1);
      expect(await find(strangerLive)).toEqual(cancelled(strangerLive, at(3000)));
      for (const d of untouched) expect(await find(d)).toEqual(d);
    });

    it('a worker holding a delivery read as pending loses its update to cancelPending', async () => {
      const d = makeDelivery(TENANT_A);
      await insert(d);
      expect(await ok(s().cancelPending(TENANT_A, d.endpointId, at(10)))).toBe(1);
      const late = { ...d, status: 'succeeded' as const, attempts: 1, nextAttemptAt: null, lastAttemptAt: at(11), lastOutcome: '200', version: d.version + 1 };
      expect(tagOf(await fails(s().update(late)))).toBe('ConcurrentModification');
      expect((await ok(s().findById(TENANT_A, d.id)))?.status).toBe('cancelled');
    });

    it('appendAttempt round-trips every field into the log, and refuses a taken id', async () => {
      const failed = makeAttempt(TENANT_A, { createdAt: at(1) });
      const succeeded = makeAttempt(TENANT_A, { attempt: 1, outcome: '200', succeeded: true, durationMs: 0, responseBody: '', createdAt: at(2) });
      const live = makeAttempt(TENANT_A_LIVE, { outcome: 'timeout', responseBody: 'timed out after 10000 ms' });
      for (const a of [succeeded, failed, live]) await ok(s().appendAttempt(a));
      expect(tagOf(await fails(s().appendAttempt({ ...failed, outcome: 'tls', createdAt: at(9) })))).toBe('ConcurrentModification');
      expect(tagOf(await fails(s().appendAttempt(makeAttempt(TENANT_B, { id: live.id }))))).toBe('ConcurrentModification');
      expect((await ok(s().listAttempts(TENANT_A, { ...everything, filter: {} }))).items).toEqual([failed, succeeded]);
      expect((await ok(s().listAttempts(TENANT_A_LIVE, { ...everything, filter: {} }))).items).toEqual([live]);
      expect((await ok(s().listAttempts(TENANT_B, { ...everything, filter: {} }))).items).toEqual([]);
    });

    it('findAttempt finds an entry of the log by its id in its own tenant only', async () => {
      const a = makeAttempt(TENANT_A, { createdAt: at(1) });
      await ok(s().appendAttempt(a));
      expect(await ok(s().findAttempt(TENANT_A, a.id))).toEqual(a);
      expect(await ok(s().findAttempt(TENANT_A_LIVE, a.id))).toBeNull();
      expect(await ok(s().findAttempt(TENANT_B, a.id))).toBeNull();
      expect(await ok(s().findAttempt(TENANT_A, 'dlv_00000000000000000000000000'))).toBeNull();
    });
  });

  const ENDPOINTS = ['whe_1', 'whe_2', 'whe_3'] as const;
  const EVENTS = ['evt_1', 'evt_2'] as const;
  describePaging<DeliveryAttempt, AttemptFilter>(h, {
    name: 'webhookDeliveries.listAttempts',
    // Other tenants' rows use the same endpoint and event ids, so a filter that forgets the tenant shows.
    make: (t, createdAt, i) => makeAttempt(t, { createdAt, endpointId: cycle(ENDPOINTS, i), eventId: cycle(EVENTS, i) }),
    insert: (s, a) => s.webhookDeliveries.appendAttempt(a),
    list: (s, t, q) => s.webhookDeliveries.listAttempts(t, q),
    all: {},
    filters: [
      { filter: { endpointId: 'whe_1' }, keeps: (a) => a.endpointId === 'whe_1' },
      { filter: { eventId: 'evt_2' }, keeps: (a) => a.eventId === 'evt_2' },
      { filter: { endpointId: 'whe_2', eventId: 'evt_2' }, keeps: (a) => a.endpointId === 'whe_2' && a.eventId === 'evt_2' },
      { filter: { endpointId: 'whe_2', eventId: 'evt_1' }, keeps: (a) => a.endpointId === 'whe_2' && a.eventId === 'evt_1' },
      { filter: { endpointId: 'whe_none' }, keeps: () => false },
      { filter: { endpointId: 'whe_1', eventId: 'evt_none' }, keeps: () => false },
    ],
  });
};

export const apiLogContract = (h: Harness) => {
  describe('apiLog', () => {
    const s = () => h().stores.apiLog;
    const all = (t = TENANT_A) => ok(s().list(t, { ...everything, filter: {} }));

    it('append writes a batch (of several tenants) whose entries round-trip every field; an empty batch writes nothing', async () => {
      const call = makeLogEntry(TENANT_A, { createdAt: at(2) });
      const anonymous = makeLogEntry(TENANT_A, { method: 'GET', target: '/api/v1/documents?limit=5', status: 401, outcome: '401', keyId: null, createdAt: at(1) });
      const hook = makeLogEntry(TENANT_A_LIVE, {
        kind: 'webhook',
        target: 'https://hooks.example.com/esig?x=«1»',
        status: null,
        outcome: 'timeout',
        durationMs: 10_000,
        keyId: null,
      });
      const other = makeLogEntry(TENANT_B);
      await ok(s().append([call, anonymous, hook, other]));
      await ok(s().append([]));
      expect((await all()).items).toEqual([anonymous, call]);
      expect((await all(TENANT_A_LIVE)).items).toEqual([hook]);
      expect((await all(TENANT_B)).items).toEqual([other]);
    });

    it('a batch with a taken id, or one repeated inside it, fails with ConcurrentModification and writes none of its entries', async () => {
      const first = makeLogEntry(TENANT_A, { createdAt: at(1) });
      await ok(s().append([first]));
      const fresh = makeLogEntry(TENANT_A, { createdAt: at(2) });
      expect(tagOf(await fails(s().append([fresh, { ...first, target: '/other' }])))).toBe('ConcurrentModification');
      const twin = makeLogEntry(TENANT_A, { createdAt: at(3) });
      expect(tagOf(await fails(s().append([twin, makeLogEntry(TENANT_A, { id: twin.id })])))).toBe('ConcurrentModification');
      expect(tagOf(await fails(s().append([{ ...first, target: '/alone' }])))).toBe('ConcurrentModification');
      expect((await all()).items).toEqual([first]);
    });

    it('inside a transaction too, a failed batch leaves none of its entries, whatever the transaction does after it', async () => {
      const first = makeLogEntry(TENANT_A, { createdAt: at(1) });
      await ok(s().append([first]));
      const fresh = makeLogEntry(TENANT_A, { createdAt: at(2) });
      const twin = makeLogEntry(TENANT_A, { createdAt: at(3) });
      // A batch of one too: a store may write it without the savepoint a longer batch needs.
      for (const batch of [[fresh, { ...first, target: '/other' }], [twin, makeLogEntry(TENANT_A, { id: twin.id })], [{ ...first, target: '/alone' }]]) {
        const r = await h().uow.transaction((tx) =>
          pipe(
            tx.apiLog.append(batch),
            TE.orElse(() => TE.right<StoreError, void>(undefined)),
          ),
        )();
        // PostgreSQL aborts a transaction after a failed statement, so its commit fails; the others commit
        // what the transaction wrote, which must be nothing of the failed batch.
        if (E.isLeft(r)) expect(tagOf(r.left)).toBe('StoreFailure');
        expect((await all()).items).toEqual([first]);
      }
    });
  });

  describePaging<ApiLogEntry, { readonly kind?: ApiLogEntry['kind'] }>(h, {
    name: 'apiLog',
    make: (t, createdAt, i) => makeLogEntry(t, { createdAt, kind: cycle(['api', 'webhook', 'api'] as const, i) }),
    insert: (s, e) => s.apiLog.append([e]),
    list: (s, t, q) => s.apiLog.list(t, q),
    all: {},
    filters: (['api', 'webhook'] as const).map((kind) => ({ filter: { kind }, keeps: (e) => e.kind === kind })),
  });
};

/** The webhook stores inside transactions: their own writes visible inside, all of them gone on Left. */
export const webhookTransactionsContract = (h: Harness) =>
  describe('webhook stores in transactions', () => {
    const seed = async () => {
      const endpoint = makeWebhookEndpoint(TENANT_A);
      const doomed = makeWebhookEndpoint(TENANT_A, { createdAt: at(1) });
      const delivery = makeDelivery(TENANT_A, { endpointId: endpoint.id });
      const waiting = makeDelivery(TENANT_A, { endpointId: endpoint.id, createdAt: at(1) });
      const s = h().stores;
      await ok(s.webhookEndpoints.insert(endpoint));
      await ok(s.webhookEndpoints.insert(doomed));
      await ok(s.webhookDeliveries.insert(delivery));
      await ok(s.webhookDeliveries.insert(waiting));
      return { endpoint, doomed, delivery, waiting };
    };

    /** Finished for good: no longer pending, so cancelPending leaves it. */
    const failedFor = (d: WebhookDelivery): WebhookDelivery => ({ ...d, status: 'failed', attempts: 1, nextAttemptAt: null, lastAttemptAt: at(5), lastOutcome: '410', version: d.version + 1 });

    /** One write through every webhook method (and an event), then reads of each inside the transaction. */
    const writeAll = (tx: Stores, seeded: Awaited<ReturnType<typeof seed>>) => {
      const added = makeWebhookEndpoint(TENANT_A, { createdAt: at(2), events: ['request.sent'] });
      const dlv = makeDelivery(TENANT_A, { endpointId: added.id, createdAt: at(2) });
      const attempt = makeAttempt(TENANT_A, { deliveryId: seeded.delivery.id });
      const entry = makeLogEntry(TENANT_A);
      const event = makeEvent(TENANT_A);
      return pipe(
        tx.webhookEndpoints.insert(added),
        TE.chain(() => tx.webhookEndpoints.findByIdForUpdate(TENANT_A, seeded.endpoint.id)),
        TE.chain((e) => tx.webhookEndpoints.update(disabled(e!))),
        TE.chain(() => tx.webhookEndpoints.delete(TENANT_A, seeded.doomed.id)),
        TE.chain(() => tx.webhookDeliveries.insert(dlv)),
        TE.chain(() => tx.webhookDeliveries.update(failedFor(seeded.delivery))),
        TE.chain(() => tx.webhookDeliveries.cancelPending(TENANT_A, seeded.endpoint.id, at(6))),
        TE.bindTo('cancelled'),
        TE.chainFirst(() => tx.webhookDeliveries.appendAttempt(attempt)),
        TE.chainFirst(() => tx.apiLog.append([entry])),
        TE.chainFirst(() => tx.events.append(event)),
        TE.bind('subscribed', () => tx.webhookEndpoints.findSubscribed(TENANT_A, 'request.sent')),
        TE.bind('endpoints', () => tx.webhookEndpoints.list(TENANT_A, { ...everything, filter: undefined })),
        TE.bind('delivery', () => tx.webhookDeliveries.findById(TENANT_A, dlv.id)),
        TE.bind('failed', () => tx.webhookDeliveries.findById(TENANT_A, seeded.delivery.id)),
        TE.bind('waiting', () => tx.webhookDeliveries.findById(TENANT_A, seeded.waiting.id)),
        TE.bind('attempts', () => tx.webhookDeliveries.listAttempts(TENANT_A, { ...everything, filter: {} })),
        TE.bind('log', () => tx.apiLog.list(TENANT_A, { ...everything, filter: {} })),
        TE.bind('event', () => tx.events.findById(TENANT_A, event.id)),
        TE.map((seen) => ({ seen, added, dlv, attempt, entry, event })),
      );
    };

    it('shows its own webhook writes to reads inside it, and commits them on Right', async () => {
      const seeded = await seed();
      const { seen, added, dlv, attempt, entry, event } = await ok(h().uow.transaction((tx) => writeAll(tx, seeded)));
      expect(seen.cancelled).toBe(1);
      expect(seen.subscribed).toEqual([added]);
      expect(seen.endpoints.items).toEqual([disabled(seeded.endpoint), added]);
      expect(seen.delivery).toEqual(dlv);
      expect(seen.failed).toEqual(failedFor(seeded.delivery));
      expect(seen.waiting?.status).toBe('cancelled');
      expect(seen.attempts.items).toEqual([attempt]);
      expect(seen.log.items).toEqual([entry]);
      expect(seen.event).toEqual(event);
      const s = h().stores;
      expect(await ok(s.webhookEndpoints.findById(TENANT_A, seeded.endpoint.id))).toEqual(disabled(seeded.endpoint));
      expect(await ok(s.webhookEndpoints.findById(TENANT_A, seeded.doomed.id))).toBeNull();
      expect(await ok(s.webhookDeliveries.findById(TENANT_A, dlv.id))).toEqual(dlv);
      expect(await ok(s.webhookDeliveries.findById(TENANT_A, seeded.delivery.id))).toEqual(failedFor(seeded.delivery));
      expect((await ok(s.webhookDeliveries.findById(TENANT_A, seeded.waiting.id)))?.status).toBe('cancelled');
      expect((await ok(s.webhookDeliveries.listAttempts(TENANT_A, { ...everything, filter: {} }))).items).toEqual([attempt]);
      expect(await ok(s.events.findById(TENANT_A, event.id))).toEqual(event);
      expect((await ok(s.apiLog.list(TENANT_A, { ...everything, filter: {} }))).items).toEqual([entry]);
    });

    it('keeps none of its webhook writes when its work returns Left', async () => {
      const seeded = await seed();
      let written: { readonly added: WebhookEndpoint; readonly dlv: WebhookDelivery; readonly event: { readonly id: string } } | undefined;
      const e = await fails(
        h().uow.transaction((tx) =>
          pipe(
            writeAll(tx, seeded),
            TE.chainW((w) => {
              written = w;
              return TE.left('abort' as const);
            }),
          ),
        ),
      );
      expect(e).toBe('abort');
      const s = h().stores;
      expect(written).toBeDefined();
      expect(await ok(s.webhookEndpoints.findById(TENANT_A, written!.added.id))).toBeNull();
      expect(await ok(s.webhookEndpoints.findById(TENANT_A, seeded.endpoint.id))).toEqual(seeded.endpoint);
      expect(await ok(s.webhookEndpoints.findById(TENANT_A, seeded.doomed.id))).toEqual(seeded.doomed);
      expect(await ok(s.webhookEndpoints.findSubscribed(TENANT_A, 'request.sent'))).toEqual([seeded.endpoint, seeded.doomed]);
      expect(await ok(s.webhookDeliveries.findById(TENANT_A, written!.dlv.id))).toBeNull();
      expect(await ok(s.webhookDeliveries.findById(TENANT_A, seeded.delivery.id))).toEqual(seeded.delivery);
      expect(await ok(s.webhookDeliveries.findById(TENANT_A, seeded.waiting.id))).toEqual(seeded.waiting);
      expect((await ok(s.webhookDeliveries.listAttempts(TENANT_A, { ...everything, filter: {} }))).items).toEqual([]);
      expect((await ok(s.apiLog.list(TENANT_A, { ...everything, filter: {} }))).items).toEqual([]);
      expect(await ok(s.events.findById(TENANT_A, written!.event.id))).toBeNull();
    });
  });
