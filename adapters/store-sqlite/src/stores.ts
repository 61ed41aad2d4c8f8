import type { StoreBuilders, Stores, UnitOfWork } from '@esig/core';
import { autoCommit, lazyStores } from '@esig/core';
import { sqliteApiKeys } from './api-keys.js';
import { sqliteApiLog } from './api-log.js';
import type { Conn } from './connection.js';
import type { KeyCache } from './key-cache.js';
import type { ContentOptions, SqliteDocumentContents } from './document-contents.js';
import { DEFAULT_CONTENT_OPTIONS, discardInBatches, sqliteDocumentContents, stageInPieces } from './document-contents.js';
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
export const bindStores = (conn: Conn, keys?: Bound['keys'], contents: ContentOptions = DEFAULT_CONTENT_OPTIONS): Stores =>
  lazyStores(BUILDERS, { conn, keys, contents });

interface Bound {
  readonly conn: Conn;
  readonly keys: { readonly cache: KeyCache; readonly role: 'read' | 'write' } | undefined;
  readonly contents: ContentOptions;
}
/** A port made from the connection alone (every port but the API keys, which also take the key cache). */
const onConn =
  <P>(make: (conn: Conn) => P) =>
  ({ conn }: Bound): P =>
    make(conn);

// Built on first use (see lazyStores): a transaction pays for the ports it uses.
const BUILDERS: StoreBuilders<Bound> = {
  documents: onConn(sqliteDocuments),
  documentContents: ({ conn, contents }) => sqliteDocumentContents(conn, contents),
  signatureRequests: onConn(sqliteSignatureRequests),
  apiKeys: ({ conn, keys }) => sqliteApiKeys(conn, keys),
  orgs: onConn(sqliteOrgs),
  idempotency: onConn(sqliteIdempotency),
  events: onConn(sqliteEvents),
  jobs: onConn(sqliteJobs),
  signingLinks: onConn(sqliteSigningLinks),
  embedSessions: onConn(sqliteEmbedSessions),
  evidence: onConn(sqliteEvidence),
  testMailbox: onConn(sqliteTestMailbox),
  webhookEndpoints: onConn(sqliteWebhookEndpoints),
  webhookDeliveries: onConn(sqliteWebhookDeliveries),
  apiLog: onConn(sqliteApiLog),
  oauth: onConn(sqliteOAuth),
};

/**
 * The stores used outside transactions. Reads go to the read connection, which sees only committed data.
 * Each write runs as a transaction of its own through `uow` (`autoCommit`), queued like any other: writing
 * on the read connection instead would wait for the write lock synchronously, blocking the event loop and
 * with it the very transaction holding the lock. Writes that belong together still belong in one transaction.
 */
export const topLevelStores = (read: Conn, uow: UnitOfWork, keys?: KeyCache, contents: ContentOptions = DEFAULT_CONTENT_OPTIONS): Stores => {
  const stores = autoCommit(bindStores(read, keys === undefined ? undefined : { cache: keys, role: 'read' }, contents), uow);
  // Staging and discarding content are the writes that grow with it: instead of one transaction (what
  // `autoCommit` makes of a write), one per piece, or per batch of pieces, each queued with other requests'
  // transactions and a turn of the event loop between them. (`autoCommit` wraps every method of the port,
  // these two included, in a transaction of its own.)
  const contentsPort = stores.documentContents as SqliteDocumentContents;
  const documentContents: SqliteDocumentContents = {
    ...contentsPort,
    stage: (tenant, bytes) => () => stageInPieces(contentsPort.writePiece, tenant, bytes, contents),
    discard: (tenant, staged) => () => discardInBatches(contentsPort.discardSome, tenant, staged),
  };
  return { ...stores, documentContents };
};
