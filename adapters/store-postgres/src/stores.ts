import type { Stores } from '@esig/core';
import { pgApiKeys } from './api-keys';
import { pgApiLog } from './api-log';
import type { Conn } from './connection';
import { pgDocumentContents } from './document-contents';
import { pgDocuments } from './documents';
import { pgEvents } from './events';
import { pgEvidence } from './evidence';
import { pgIdempotency } from './idempotency';
import { pgJobs } from './jobs';
import { pgOrgs } from './orgs';
import { pgSignatureRequests } from './signature-requests';
import { pgSigningLinks } from './signing-links';
import { pgTestMailbox } from './test-mailbox';
import { pgWebhookDeliveries } from './webhook-deliveries';
import { pgWebhookEndpoints } from './webhook-endpoints';

/**
 * Every store bound to one place to run statements: the pool, or a transaction's client. Each method is
 * a single statement, so on the pool it is atomic on its own (PostgreSQL wraps it in a transaction).
 */
export const bindStores = (conn: Conn): Stores => ({
  documents: pgDocuments(conn),
  documentContents: pgDocumentContents(conn),
  signatureRequests: pgSignatureRequests(conn),
  apiKeys: pgApiKeys(conn),
  orgs: pgOrgs(conn),
  idempotency: pgIdempotency(conn),
  events: pgEvents(conn),
  jobs: pgJobs(conn),
  signingLinks: pgSigningLinks(conn),
  evidence: pgEvidence(conn),
  testMailbox: pgTestMailbox(conn),
  webhookEndpoints: pgWebhookEndpoints(conn),
  webhookDeliveries: pgWebhookDeliveries(conn),
  apiLog: pgApiLog(conn),
});
