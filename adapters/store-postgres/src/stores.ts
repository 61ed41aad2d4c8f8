import type { StoreBuilders, Stores } from '@esig/core';
import { lazyStores } from '@esig/core';
import { pgApiKeys } from './api-keys.js';
import { pgApiLog } from './api-log.js';
import { pgOAuth } from './oauth.js';
import type { Conn } from './connection.js';
import { pgDocumentContents } from './document-contents.js';
import { pgDocuments } from './documents.js';
import { pgEvents } from './events.js';
import { pgEvidence } from './evidence.js';
import { pgIdempotency } from './idempotency.js';
import { pgJobs } from './jobs.js';
import { pgOrgs } from './orgs.js';
import { pgSignatureRequests } from './signature-requests.js';
import { pgSigningLinks } from './signing-links.js';
import { pgEmbedSessions } from './embed-sessions.js';
import { pgTestMailbox } from './test-mailbox.js';
import { pgWebhookDeliveries } from './webhook-deliveries.js';
import { pgWebhookEndpoints } from './webhook-endpoints.js';

/**
 * Every store bound to one place to run statements: the pool, or a transaction's client. Each method is
 * a single statement, so on the pool it is atomic on its own (PostgreSQL wraps it in a transaction).
 */
export const bindStores = (conn: Conn): Stores => lazyStores(BUILDERS, conn);

// Built on first use (see lazyStores): a transaction pays for the ports it uses.
const BUILDERS: StoreBuilders<Conn> = {
  documents: pgDocuments,
  documentContents: pgDocumentContents,
  signatureRequests: pgSignatureRequests,
  apiKeys: pgApiKeys,
  orgs: pgOrgs,
  idempotency: pgIdempotency,
  events: pgEvents,
  jobs: pgJobs,
  signingLinks: pgSigningLinks,
  embedSessions: pgEmbedSessions,
  evidence: pgEvidence,
  testMailbox: pgTestMailbox,
  webhookEndpoints: pgWebhookEndpoints,
  webhookDeliveries: pgWebhookDeliveries,
  apiLog: pgApiLog,
  oauth: pgOAuth,
};
