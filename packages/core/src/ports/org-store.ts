import type { Org } from '../model/api-key.js';
import type { StoreResult } from './store-result.js';

/** Organizations, the top-level tenant. Names are unique. */
export interface OrgStore {
  insert(org: Org): StoreResult<void>;
  findByName(name: string): StoreResult<Org | null>;
}
