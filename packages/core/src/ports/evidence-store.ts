import type { EvidenceEntry } from '../model/evidence';
import type { Tenant } from '../model/tenant';
import type { StoreResult } from './store-result';

/** The append-only audit trail of signature requests. */
export interface EvidenceStore {
  append(entry: EvidenceEntry): StoreResult<void>;
  /** Every entry of one request of this tenant, in the order they happened (at, then id). */
  listForRequest(tenant: Tenant, requestId: string): StoreResult<readonly EvidenceEntry[]>;
}
