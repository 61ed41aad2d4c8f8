import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/**
 * What a stored PDF is: an uploaded document's bytes as uploaded, or one of a completed request's two sealed
 * artifacts (the finished PDF, the evidence certificate). A store may name them as it likes, as long as no
 * two keys share a name.
 */
export type ContentKey =
  | { readonly kind: 'upload'; readonly documentId: string }
  | { readonly kind: 'finished'; readonly requestId: string }
  | { readonly kind: 'certificate'; readonly requestId: string };

/** The bytes of uploaded documents and of sealed artifacts, written in the same transaction as their metadata. */
export interface DocumentContentStore {
  /** Stores a copy of `bytes` under `key` in this tenant, replacing any stored there. */
  put(tenant: Tenant, key: ContentKey, bytes: Uint8Array): StoreResult<void>;
  /** A copy of the bytes under `key`; `null` when absent in this tenant. */
  get(tenant: Tenant, key: ContentKey): StoreResult<Uint8Array | null>;
}
