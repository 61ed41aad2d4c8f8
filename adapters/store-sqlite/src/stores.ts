import type { StoreResult, Stores, UnitOfWork } from '@esig/core';
import { sqliteApiKeys } from './api-keys.js';
import { sqliteApiLog } from './api-log.js';
import type { Conn } from './connection.js';
import { sqliteDocumentContents } from './document-contents.js';
import { sqliteDocuments } from './documents.js';
import { sqliteEvents } from './events.js';
import { sqliteEvidence } from './evidence.js';
import { sqliteIdempotency } from './idempotency.js';
import { sqliteJobs } from './jobs.js';
import { sqliteOrgs } from './orgs.js';
import { sqliteSignatureRequests } from './signature-requests.js';
import { sqliteSigningLinks } from './signing-links.js';
import { sqliteTestMailbox } from './test-mailbox.js';
import { sqliteWebhookDeliveries } from './webhook-deliveries.js';
import { sqliteWebhookEndpoints } from './webhook-endpoints.js';

/** Every store bound to one connection: the read connection, or the write connection inside a transaction. */
export const bindStores = (conn: Conn): Stores => ({
  documents: sqliteDocuments(conn),
  documentContents: sqliteDocumentContents(conn),
  signatureRequests: sqliteSignatureRequests(conn),
  apiKeys: sqliteApiKeys(conn),
  orgs: sqliteOrgs(conn),
  idempotency: sqliteIdempotency(conn),
  events: sqliteEvents(conn),
  jobs: sqliteJobs(conn),
  signingLinks: sqliteSigningLinks(conn),
  evidence: sqliteEvidence(conn),
  testMailbox: sqliteTestMailbox(conn),
  webhookEndpoints: sqliteWebhookEndpoints(conn),
  webhookDeliveries: sqliteWebhookDeliveries(conn),
  apiLog: sqliteApiLog(conn),
});

/**
 * The stores used outside transactions. Reads go to the read connection, which sees only committed data.
 * Each write runs as a transaction of its own through `uow`, queued like any other: writing on the read
 * connection instead would wait for the write lock synchronously, blocking the event loop and with it
 * the very transaction holding the lock. Writes that belong together still belong in one transaction.
 */
export const topLevelStores = (read: Conn, uow: UnitOfWork): Stores => {
  const r = bindStores(read);
  const inTx = <A>(f: (tx: Stores) => StoreResult<A>): StoreResult<A> => uow.transaction(f);
  return {
    documents: {
      ...r.documents,
      insert: (doc) => inTx((tx) => tx.documents.insert(doc)),
      attachToRequest: (tenant, ids, requestId) => inTx((tx) => tx.documents.attachToRequest(tenant, ids, requestId)),
      setStatusForRequest: (tenant, requestId, status) => inTx((tx) => tx.documents.setStatusForRequest(tenant, requestId, status)),
    },
    documentContents: {
      ...r.documentContents,
      put: (tenant, key, bytes) => inTx((tx) => tx.documentContents.put(tenant, key, bytes)),
    },
    signatureRequests: {
      ...r.signatureRequests,
      insert: (req) => inTx((tx) => tx.signatureRequests.insert(req)),
      update: (next) => inTx((tx) => tx.signatureRequests.update(next)),
    },
    apiKeys: {
      ...r.apiKeys,
      insert: (key) => inTx((tx) => tx.apiKeys.insert(key)),
      revoke: (tenant, id, at) => inTx((tx) => tx.apiKeys.revoke(tenant, id, at)),
    },
    orgs: {
      ...r.orgs,
      insert: (org) => inTx((tx) => tx.orgs.insert(org)),
    },
    idempotency: {
      ...r.idempotency,
      insertIfAbsent: (record) => inTx((tx) => tx.idempotency.insertIfAbsent(record)),
      replace: (record) => inTx((tx) => tx.idempotency.replace(record)),
      complete: (tenant, key, response) => inTx((tx) => tx.idempotency.complete(tenant, key, response)),
      release: (tenant, key) => inTx((tx) => tx.idempotency.release(tenant, key)),
      purgeExpired: (now) => inTx((tx) => tx.idempotency.purgeExpired(now)),
    },
    events: {
      ...r.events,
      append: (event) => inTx((tx) => tx.events.append(event)),
    },
    jobs: {
      ...r.jobs,
      enqueue: (job) => inTx((tx) => tx.jobs.enqueue(job)),
      // A claim writes (the lease), so it runs on the write connection like any other write.
      claim: (kinds, worker, now, leaseUntil, limit) => inTx((tx) => tx.jobs.claim(kinds, worker, now, leaseUntil, limit)),
      complete: (id, worker) => inTx((tx) => tx.jobs.complete(id, worker)),
      extendLease: (id, worker, leaseUntil) => inTx((tx) => tx.jobs.extendLease(id, worker, leaseUntil)),
      annotate: (id, notes) => inTx((tx) => tx.jobs.annotate(id, notes)),
      revive: (id, now) => inTx((tx) => tx.jobs.revive(id, now)),
      retry: (id, worker, runAt, error) => inTx((tx) => tx.jobs.retry(id, worker, runAt, error)),
      bury: (id, worker, error) => inTx((tx) => tx.jobs.bury(id, worker, error)),
    },
    signingLinks: {
      ...r.signingLinks,
      insert: (link) => inTx((tx) => tx.signingLinks.insert(link)),
    },
    evidence: {
      ...r.evidence,
      append: (entry) => inTx((tx) => tx.evidence.append(entry)),
    },
    testMailbox: {
      ...r.testMailbox,
      insert: (mail) => inTx((tx) => tx.testMailbox.insert(mail)),
    },
    webhookEndpoints: {
      ...r.webhookEndpoints,
      insert: (endpoint) => inTx((tx) => tx.webhookEndpoints.insert(endpoint)),
      update: (next) => inTx((tx) => tx.webhookEndpoints.update(next)),
      delete: (tenant, id) => inTx((tx) => tx.webhookEndpoints.delete(tenant, id)),
    },
    webhookDeliveries: {
      ...r.webhookDeliveries,
      insert: (delivery) => inTx((tx) => tx.webhookDeliveries.insert(delivery)),
      update: (next) => inTx((tx) => tx.webhookDeliveries.update(next)),
      cancelPending: (tenant, endpointId, at) => inTx((tx) => tx.webhookDeliveries.cancelPending(tenant, endpointId, at)),
      appendAttempt: (attempt) => inTx((tx) => tx.webhookDeliveries.appendAttempt(attempt)),
    },
    apiLog: {
      ...r.apiLog,
      append: (entries) => inTx((tx) => tx.apiLog.append(entries)),
    },
  };
};
