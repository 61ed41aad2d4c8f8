import type { GrantedScope } from './scopes';
import type { Tenant } from './tenant';

/** Who is calling: resolved from an API key (or, later, an OAuth token) before any use case runs. */
export interface Principal {
  readonly tenant: Tenant;
  readonly keyId: string;
  readonly scopes: readonly GrantedScope[];
}
