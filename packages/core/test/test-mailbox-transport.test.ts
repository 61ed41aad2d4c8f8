import { describeMailTransportContract } from '@esig/testkit/mail-transport-contract';
import { testMailboxTransport } from '@esig/core';
import { createManualClock, createMemoryStores, createSequentialIds, ok } from '@esig/testkit';
import { TENANT } from './arbitraries.js';

describeMailTransportContract('the test mailbox (memory stores)', async () => {
  const { stores, uow } = createMemoryStores();
  return {
    transport: testMailboxTransport({ uow, clock: createManualClock('2026-01-01T00:00:00.000Z'), ids: createSequentialIds() }, TENANT),
    delivered: async () =>
      (await ok(stores.testMailbox.list(TENANT, { limit: 100, order: 'asc', after: null, filter: {} }))).items.map((m) => ({
        to: [m.to],
        subject: m.subject,
        text: m.text,
        html: m.html,
        messageId: m.messageId,
      })),
    cleanup: async () => undefined,
  };
});
