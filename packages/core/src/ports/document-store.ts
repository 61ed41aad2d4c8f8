import type { Document, DocumentStatus } from '../model/document.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

/** A request as `setStatusForRequest` needs it: its id and the documents it lists. */
export interface RequestDocuments {
  readonly id: string;
  readonly documentIds: readonly string[];
}

/** What `attachToRequest` checks beyond the documents being the tenant's and free. */
export interface AttachLimits {
  /** The most pages the documents may have together. */
  readonly maxPages: number;
}

export interface DocumentFilter {
  readonly status?: DocumentStatus;
}

/**
 * Document metadata. Every method filters by tenant: a document of another org or mode is "not found"
 * (`null`), indistinguishable from one that does not exist.
 */
export interface DocumentStore {
  insert(doc: Document): StoreResult<void>;
  /** `null` when absent in this tenant. */
  findById(tenant: Tenant, id: string): StoreResult<Document | null>;
  /** The documents among `ids` that exist in this tenant, in no particular order. */
  findByIds(tenant: Tenant, ids: readonly string[]): StoreResult<readonly Document[]>;
  list(tenant: Tenant, query: KeysetQuery<DocumentFilter>): StoreResult<KeysetPage<Document>>;
  /**
   * Links documents to a request, all or none. Fails with ConcurrentModification, linking none, if any is
   * already linked elsewhere or is not in this tenant, or, given `limits.maxPages`, if together they have more
   * pages than that. Linking again to the same request is harmless. The store tests all of it in the write
   * itself, so a caller that has not read the documents may rely on it: create-request's unread form does.
   */
  attachToRequest(tenant: Tenant, ids: readonly string[], requestId: string, limits?: AttachLimits): StoreResult<void>;
  /**
   * Sets the status of a request's documents: those among `request.documentIds` that are linked to `request.id`
   * in this tenant. (Named by their ids, a store can find them by its primary key, without an index of the link.)
   */
  setStatusForRequest(tenant: Tenant, request: RequestDocuments, status: DocumentStatus): StoreResult<void>;
}
