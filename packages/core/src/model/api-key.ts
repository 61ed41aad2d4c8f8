import type { GrantedScope } from './scopes.js';
import type { Mode } from './tenant.js';

/** A stored API key. The secret itself is never stored: only its SHA-256 and a short visible prefix. */
export interface ApiKey {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly name: string;
  /** The first characters of the secret, so a person can tell keys apart in a list. */
  readonly prefix: string;
  readonly secretHash: string;
  readonly scopes: readonly GrantedScope[];
  readonly createdAt: string;
  readonly revokedAt: string | null;
}

export interface Org {
  readonly id: string;
  readonly name: string;
  readonly createdAt: string;
}
