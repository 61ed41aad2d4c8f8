import type { Tenant } from '../model/tenant';
import type { StoreResult } from './store-result';

/** The bytes of uploaded (and, later, finished) PDFs, written in the same transaction as their metadata. */
export interface DocumentContentStore {
  /** Stores a copy of `bytes`, replacing any stored for this document in this tenant. */
  put(tenant: Tenant, documentId: string, bytes: Uint8Array): StoreResult<void>;
  /** `null` when absent in this tenant. */
  get(tenant: Tenant, documentId: string): StoreResult<Uint8Array | null>;
}
