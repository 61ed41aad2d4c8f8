import type { ApiKeyStore } from './api-key-store';
import type { DocumentContentStore } from './document-content-store';
import type { DocumentStore } from './document-store';
import type { EventOutbox } from './event-outbox';
import type { IdempotencyStore } from './idempotency-store';
import type { OrgStore } from './org-store';
import type { SignatureRequestStore } from './signature-request-store';

/** The store ports together, as one adapter provides them (bound to a connection or a transaction). */
export interface Stores {
  readonly documents: DocumentStore;
  readonly documentContents: DocumentContentStore;
  readonly signatureRequests: SignatureRequestStore;
  readonly apiKeys: ApiKeyStore;
  readonly orgs: OrgStore;
  readonly idempotency: IdempotencyStore;
  readonly events: EventOutbox;
}
