import type { Stores } from '@esig/core';
import { afterEach, beforeEach, describe } from 'vitest';
import { apiKeysContract, orgsContract } from './store-contract/api-keys.js';
import { documentContentsContract, documentsContract } from './store-contract/documents.js';
import { embedSessionsContract } from './store-contract/embed-sessions.js';
import { eventsContract } from './store-contract/events.js';
import type { Harness, StoreHarness } from './store-contract/harness.js';
import { idempotencyContract } from './store-contract/idempotency.js';
import { jobsContract } from './store-contract/jobs.js';
import { oauthContract } from './store-contract/oauth.js';
import { pagingContract } from './store-contract/paging.js';
import { signatureRequestsContract } from './store-contract/signature-requests.js';
import { evidenceContract, signingLinksContract } from './store-contract/signing.js';
import { testMailboxContract } from './store-contract/test-mailbox.js';
import { transactionsContract } from './store-contract/transactions.js';
import { apiLogContract, webhookDeliveriesContract, webhookEndpointsContract, webhookTransactionsContract } from './store-contract/webhooks.js';

export * from './builders.js';
export type { StoreHarness } from './store-contract/harness.js';

/** The store ports, each with a group of the contract of its own. */
export const STORE_PORTS = [
  'documents',
  'documentContents',
  'signatureRequests',
  'apiKeys',
  'orgs',
  'idempotency',
  'events',
  'jobs',
  'signingLinks',
  'embedSessions',
  'evidence',
  'testMailbox',
  'webhookEndpoints',
  'webhookDeliveries',
  'apiLog',
  'oauth',
] as const satisfies ReadonlyArray<keyof Stores>;
export type StorePort = (typeof STORE_PORTS)[number];

const GROUPS: { readonly [P in StorePort]: (h: Harness) => void } = {
  documents: documentsContract,
  documentContents: documentContentsContract,
  signatureRequests: signatureRequestsContract,
  apiKeys: apiKeysContract,
  orgs: orgsContract,
  idempotency: idempotencyContract,
  events: eventsContract,
  jobs: jobsContract,
  signingLinks: signingLinksContract,
  embedSessions: embedSessionsContract,
  evidence: evidenceContract,
  testMailbox: testMailboxContract,
  webhookEndpoints: webhookEndpointsContract,
  webhookDeliveries: webhookDeliveriesContract,
  apiLog: apiLogContract,
  oauth: oauthContract,
};

export interface StoreContractOptions {
  /**
   * Only these ports' groups (an adapter for a few ports, with the others from `createMemoryStores` through
   * `overridePorts`). Without it every group runs, and so do the groups that need every port at once:
   * keyset paging across lists, transactions and concurrency.
   */
  readonly ports?: readonly StorePort[];
}

/**
 * Runs the store ports' contract (ports/*.ts) against an adapter: round trips, org and mode isolation,
 * keyset paging, the job queue's leases, webhooks and the request log, transactions and concurrency. Every adapter (in-memory, SQLite,
 * PostgreSQL) runs it; each test gets a fresh harness from `makeHarness` and cleans it up afterwards.
 *
 * @example
 * // A whole adapter:
 * describeStoreContract('sqlite', async () => ({ ...openSqliteStore({ path: tmpFile() }), cleanup: async () => undefined }));
 * // One port of your own, the rest in memory:
 * describeStoreContract('s3 contents', async () => ({ ...overridePorts(createMemoryStores(), { documentContents: () => s3 }), cleanup }), { ports: ['documentContents'] });
 */
export const describeStoreContract = (adapterName: string, makeHarness: () => Promise<StoreHarness>, opts: StoreContractOptions = {}): void => {
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

    for (const port of opts.ports ?? STORE_PORTS) GROUPS[port](h);
    if (opts.ports === undefined) {
      pagingContract(h);
      transactionsContract(h);
      webhookTransactionsContract(h);
    }
  });
};
