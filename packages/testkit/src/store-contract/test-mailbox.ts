import { describe, expect, it } from 'vitest';
import { TENANT_A, at, makeStoredMail, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

/** Paging and the `to` filter are in the paging contract; these are the rest. */
export const testMailboxContract = (h: Harness) =>
  describe('testMailbox', () => {
    const list = (to?: string) => ok(h().stores.testMailbox.list(TENANT_A, { limit: 100, order: 'asc', after: null, filter: to === undefined ? {} : { to } }));

    it('round-trips every field of a mail', async () => {
      const first = makeStoredMail(TENANT_A, { createdAt: at(1) });
      const second = makeStoredMail(TENANT_A, { createdAt: at(2), to: 'bo@example.com', text: '', html: '' });
      await ok(h().stores.testMailbox.insert(second));
      await ok(h().stores.testMailbox.insert(first));
      expect(await list()).toEqual({ items: [first, second], hasMore: false });
      expect(await list('bo@example.com')).toEqual({ items: [second], hasMore: false });
    });

    it("lists nothing of another org or the other mode, whatever the filter", async () => {
      const mail = makeStoredMail(TENANT_A);
      await ok(h().stores.testMailbox.insert(mail));
      for (const t of STRANGERS)
        for (const filter of [{}, { to: mail.to }])
          expect(await ok(h().stores.testMailbox.list(t, { limit: 10, order: 'desc', after: null, filter }))).toEqual({ items: [], hasMore: false });
    });
  });
