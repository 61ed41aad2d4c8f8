import type { Tenant } from '../model/tenant';
import type { StoreResult } from './store-result';

/** The bytes of uploaded (and, later, finished) PDFs, written in the same transaction as their metadata. */
export interface DocumentContentStore {
  put(tenant: Tenant, documentId: string, bytes: Uint8Array): StoreResult<void>;
  /** `null` when absent in this tenant. */
  get(tenant: Tenant, documentId: string): StoreResult<Uint8Array | null>;
}
