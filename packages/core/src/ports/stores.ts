import type { ApiKeyStore } from './api-key-store.js';
import type { DocumentContentStore } from './document-content-store.js';
import type { DocumentStore } from './document-store.js';
import type { EmbedSessionStore } from './embed-session-store.js';
import type { EventOutbox } from './event-outbox.js';
import type { IdempotencyStore } from './idempotency-store.js';
import type { OAuthStore } from './oauth-store.js';
import type { OrgStore } from './org-store.js';
import type { EvidenceStore } from './evidence-store.js';
import type { JobQueue } from './job-queue.js';
import type { SignatureRequestStore } from './signature-request-store.js';
import type { SigningLinkStore } from './signing-link-store.js';
import type { TestMailboxStore } from './test-mailbox-store.js';
import type { ApiLogStore } from './api-log-store.js';
import type { WebhookDeliveryStore } from './webhook-delivery-store.js';
import type { WebhookEndpointStore } from './webhook-endpoint-store.js';

/** The store ports together, as one adapter provides them (bound to a connection or a transaction). */
export interface Stores {
  readonly documents: DocumentStore;
  readonly documentContents: DocumentContentStore;
  readonly signatureRequests: SignatureRequestStore;
  readonly apiKeys: ApiKeyStore;
  readonly orgs: OrgStore;
  readonly idempotency: IdempotencyStore;
  readonly events: EventOutbox;
  readonly jobs: JobQueue;
  readonly signingLinks: SigningLinkStore;
  readonly embedSessions: EmbedSessionStore;
  readonly evidence: EvidenceStore;
  readonly testMailbox: TestMailboxStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly webhookDeliveries: WebhookDeliveryStore;
  readonly apiLog: ApiLogStore;
  readonly oauth: OAuthStore;
}
