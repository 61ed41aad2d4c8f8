import { describe, expect, it } from 'vitest';
import { TENANT_A, at, fails, makeEvent, ok, tagOf } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS, firstPage } from './harness.js';

export const eventsContract = (h: Harness) =>
  describe('events', () => {
    it('round-trips every field, nested data and redelivery link included', async () => {
      const original = makeEvent(TENANT_A, { id: 'request.completed:req_1', type: 'request.completed', createdAt: at(1) });
      const redelivery = makeEvent(TENANT_A, { createdAt: at(2), redeliveryOf: original.id, data: {} });
      await ok(h().stores.events.append(original));
      await ok(h().stores.events.append(redelivery));
      expect((await firstPage(h().stores, TENANT_A)).items).toEqual([original, redelivery]);
    });

    it('appending an existing id fails with ConcurrentModification and the first event stays', async () => {
      const first = makeEvent(TENANT_A, { id: 'request.completed:req_1', type: 'request.completed' });
      await ok(h().stores.events.append(first));
      const again = { ...first, createdAt: at(9), data: { other: true } };
      expect(tagOf(await fails(h().stores.events.append(again)))).toBe('ConcurrentModification');
      expect((await firstPage(h().stores, TENANT_A)).items).toEqual([first]);
    });

    it('findById finds an event of its own tenant only', async () => {
      const e = makeEvent(TENANT_A, { id: 'request.completed:req_1', type: 'request.completed', redeliveryOf: 'evt_original' });
      const other = makeEvent(TENANT_A);
      await ok(h().stores.events.append(e));
      await ok(h().stores.events.append(other));
      expect(await ok(h().stores.events.findById(TENANT_A, e.id))).toEqual(e);
      expect(await ok(h().stores.events.findById(TENANT_A, 'evt_unknown'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.events.findById(t, e.id))).toBeNull();
    });

    it("lists nothing of another org or the other mode", async () => {
      await ok(h().stores.events.append(makeEvent(TENANT_A)));
      for (const t of STRANGERS) expect(await firstPage(h().stores, t)).toEqual({ items: [], hasMore: false });
    });
  });

