import type { Stores, UnitOfWork } from '@esig/core';
import { autoCommit } from '@esig/core';
import { sqliteApiKeys } from './api-keys.js';
import { sqliteApiLog } from './api-log.js';
import type { Conn } from './connection.js';
import type { KeyCache } from './key-cache.js';
import { sqliteDocumentContents } from './document-contents.js';
import { sqliteDocuments } from './documents.js';
import { sqliteEmbedSessions } from './embed-sessions.js';
import { sqliteEvents } from './events.js';
import { sqliteEvidence } from './evidence.js';
import { sqliteIdempotency } from './idempotency.js';
import { sqliteJobs } from './jobs.js';
import { sqliteOAuth } from './oauth.js';
import { sqliteOrgs } from './orgs.js';
import { sqliteSignatureRequests } from './signature-requests.js';
import { sqliteSigningLinks } from './signing-links.js';
import { sqliteTestMailbox } from './test-mailbox.js';
import { sqliteWebhookDeliveries } from './webhook-deliveries.js';
import { sqliteWebhookEndpoints } from './webhook-endpoints.js';

/**
 * Every store bound to one connection: the read connection, or the write connection inside a transaction.
 * With `keys`, API-key lookups on the read connection go through the cache and revocations on the write
 * connection invalidate it.
 */
export const bindStores = (conn: Conn, keys?: { readonly cache: KeyCache; readonly role: 'read' | 'write' }): Stores => ({
  documents: sqliteDocuments(conn),
  documentContents: sqliteDocumentContents(conn),
  signatureRequests: sqliteSignatureRequests(conn),
  apiKeys: sqliteApiKeys(conn, keys),
  orgs: sqliteOrgs(conn),
  idempotency: sqliteIdempotency(conn),
  events: sqliteEvents(conn),
  jobs: sqliteJobs(conn),
  signingLinks: sqliteSigningLinks(conn),
  embedSessions: sqliteEmbedSessions(conn),
  evidence: sqliteEvidence(conn),
  testMailbox: sqliteTestMailbox(conn),
  webhookEndpoints: sqliteWebhookEndpoints(conn),
  webhookDeliveries: sqliteWebhookDeliveries(conn),
  apiLog: sqliteApiLog(conn),
  oauth: sqliteOAuth(conn),
});

/**
 * The stores used outside transactions. Reads go to the read connection, which sees only committed data.
 * Each write runs as a transaction of its own through `uow` (`autoCommit`), queued like any other: writing
 * on the read connection instead would wait for the write lock synchronously, blocking the event loop and
 * with it the very transaction holding the lock. Writes that belong together still belong in one transaction.
 */
export const topLevelStores = (read: Conn, uow: UnitOfWork, keys?: KeyCache): Stores =>
  autoCommit(bindStores(read, keys === undefined ? undefined : { cache: keys, role: 'read' }), uow);
