import { afterEach, beforeEach, describe } from 'vitest';
import { apiKeysContract, orgsContract } from './store-contract/api-keys';
import { documentContentsContract, documentsContract } from './store-contract/documents';
import { eventsContract } from './store-contract/events';
import type { Harness, StoreHarness } from './store-contract/harness';
import { idempotencyContract } from './store-contract/idempotency';
import { jobsContract } from './store-contract/jobs';
import { pagingContract } from './store-contract/paging';
import { signatureRequestsContract } from './store-contract/signature-requests';
import { evidenceContract, signingLinksContract } from './store-contract/signing';
import { testMailboxContract } from './store-contract/test-mailbox';
import { transactionsContract } from './store-contract/transactions';
import { apiLogContract, webhookDeliveriesContract, webhookEndpointsContract, webhookTransactionsContract } from './store-contract/webhooks';

export * from './builders';
export type { StoreHarness } from './store-contract/harness';

/**
 * Runs the store ports' contract (ports/*.ts) against an adapter: round trips, org and mode isolation,
 * keyset paging, the job queue's leases, webhooks and the request log, transactions and concurrency. Every adapter (in-memory, SQLite,
 * PostgreSQL) runs it; each test gets a fresh harness from `makeHarness` and cleans it up afterwards.
 */
export const describeStoreContract = (adapterName: string, makeHarness: () => Promise<StoreHarness>): void => {
  describe(`store contract: ${adapterName}`, () => {
    let current: StoreHarness | undefined;
    beforeEach(async () => {
      current = await makeHarness();
    });
    afterEach(async () => {
      await current?.cleanup();
      current = undefined;
    });
    const h: Harness = () => {
      if (current === undefined) throw new Error('no harness: the store contract runs only inside its tests');
      return current;
    };

    documentsContract(h);
    documentContentsContract(h);
    signatureRequestsContract(h);
    apiKeysContract(h);
    orgsContract(h);
    idempotencyContract(h);
    eventsContract(h);
    jobsContract(h);
    signingLinksContract(h);
    evidenceContract(h);
    testMailboxContract(h);
    pagingContract(h);
    transactionsContract(h);
    webhookEndpointsContract(h);
    webhookDeliveriesContract(h);
    apiLogContract(h);
    webhookTransactionsContract(h);
  });
};
