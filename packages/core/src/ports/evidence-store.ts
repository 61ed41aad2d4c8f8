import type { EvidenceEntry } from '../model/evidence.js';
import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/** The append-only audit trail of signature requests. */
export interface EvidenceStore {
  append(entry: EvidenceEntry): StoreResult<void>;
  /** Every entry of one request of this tenant, in the order they happened (at, then id). */
  listForRequest(tenant: Tenant, requestId: string): StoreResult<readonly EvidenceEntry[]>;
}
