import type { Mode } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/** A signing link: the hash of its token, bound to one recipient of one request. */
export interface SigningLink {
  readonly tokenHash: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly requestId: string;
  readonly recipientId: string;
  readonly createdAt: string;
  /** Null: valid until the request ends (CONTRACT: signing-link lifetime). */
  readonly expiresAt: string | null;
}

/**
 * Signing links. The clear token exists only in the e-mail; the store keeps its SHA-256, so a database
 * leak yields no working link.
 */
export interface SigningLinkStore {
  insert(link: SigningLink): StoreResult<void>;
  /** The link with this token hash in any tenant (the token is the credential), or null. */
  findByTokenHash(tokenHash: string): StoreResult<SigningLink | null>;
}
