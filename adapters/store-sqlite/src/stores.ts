import type { StoreBuilders, Stores, UnitOfWork } from '@esig/core';
import { autoCommit, lazyStores } from '@esig/core';
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
export const bindStores = (conn: Conn, keys?: { readonly cache: KeyCache; readonly role: 'read' | 'write' }): Stores => lazyStores(BUILDERS, { conn, keys });

// Built on first use (see lazyStores): a transaction pays for the ports it uses.
const BUILDERS: StoreBuilders<{ readonly conn: Conn; readonly keys: { readonly cache: KeyCache; readonly role: 'read' | 'write' } | undefined }> = {
  documents: ({ conn }) => sqliteDocuments(conn),
  documentContents: ({ conn }) => sqliteDocumentContents(conn),
  signatureRequests: ({ conn }) => sqliteSignatureRequests(conn),
  apiKeys: ({ conn, keys }) => sqliteApiKeys(conn, keys),
  orgs: ({ conn }) => sqliteOrgs(conn),
  idempotency: ({ conn }) => sqliteIdempotency(conn),
  events: ({ conn }) => sqliteEvents(conn),
  jobs: ({ conn }) => sqliteJobs(conn),
  signingLinks: ({ conn }) => sqliteSigningLinks(conn),
  embedSessions: ({ conn }) => sqliteEmbedSessions(conn),
  evidence: ({ conn }) => sqliteEvidence(conn),
  testMailbox: ({ conn }) => sqliteTestMailbox(conn),
  webhookEndpoints: ({ conn }) => sqliteWebhookEndpoints(conn),
  webhookDeliveries: ({ conn }) => sqliteWebhookDeliveries(conn),
  apiLog: ({ conn }) => sqliteApiLog(conn),
  oauth: ({ conn }) => sqliteOAuth(conn),
};

/**
 * The stores used outside transactions. Reads go to the read connection, which sees only committed data.
 * Each write runs as a transaction of its own through `uow` (`autoCommit`), queued like any other: writing
 * on the read connection instead would wait for the write lock synchronously, blocking the event loop and
 * with it the very transaction holding the lock. Writes that belong together still belong in one transaction.
 */
export const topLevelStores = (read: Conn, uow: UnitOfWork, keys?: KeyCache): Stores =>
  autoCommit(bindStores(read, keys === undefined ? undefined : { cache: keys, role: 'read' }), uow);
