import type { ApiKeyStore } from './api-key-store';
import type { DocumentContentStore } from './document-content-store';
import type { DocumentStore } from './document-store';
import type { EventOutbox } from './event-outbox';
import type { IdempotencyStore } from './idempotency-store';
import type { OrgStore } from './org-store';
import type { EvidenceStore } from './evidence-store';
import type { JobQueue } from './job-queue';
import type { SignatureRequestStore } from './signature-request-store';
import type { SigningLinkStore } from './signing-link-store';
import type { TestMailboxStore } from './test-mailbox-store';
import type { ApiLogStore } from './api-log-store';
import type { WebhookDeliveryStore } from './webhook-delivery-store';
import type { WebhookEndpointStore } from './webhook-endpoint-store';

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
  readonly evidence: EvidenceStore;
  readonly testMailbox: TestMailboxStore;
  readonly webhookEndpoints: WebhookEndpointStore;
  readonly webhookDeliveries: WebhookDeliveryStore;
  readonly apiLog: ApiLogStore;
}
