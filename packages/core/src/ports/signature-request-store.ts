import type { RequestStatus, SignatureRequest } from '../model/signature-request.js';
import type { Tenant } from '../model/tenant.js';
import type { KeysetPage, KeysetQuery, StoreResult } from './store-result.js';

export interface SignatureRequestFilter {
  readonly status?: RequestStatus;
}

/**
 * Signature requests, stored and loaded as whole aggregates (with recipients and fields).
 * Every method filters by tenant; another org's or mode's request is `null`.
 */
export interface SignatureRequestStore {
  insert(req: SignatureRequest): StoreResult<void>;
  findById(tenant: Tenant, id: string): StoreResult<SignatureRequest | null>;
  /**
   * Like findById, and (inside a transaction) holds the request's row lock until the transaction ends.
   * Every change loads the request this way, so concurrent changes to one request (a signer signing while
   * the worker records the invitation) queue instead of failing their version check — a job that lost such
   * a race would otherwise be repeated, mail and all.
   */
  findByIdForUpdate(tenant: Tenant, id: string): StoreResult<SignatureRequest | null>;
  /**
   * Replaces the stored aggregate with `next` if the stored version is still `next.version - 1`;
   * otherwise fails with ConcurrentModification and writes nothing (optimistic concurrency).
   */
  update(next: SignatureRequest): StoreResult<void>;
  list(tenant: Tenant, query: KeysetQuery<SignatureRequestFilter>): StoreResult<KeysetPage<SignatureRequest>>;
}
