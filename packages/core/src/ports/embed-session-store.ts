import type { Mode } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/**
 * An embedded signing session: the hash of its one-time token, bound to one recipient of one request and
 * to the one browser origin allowed to frame it (CONTRACT: "Embedded signing").
 */
export interface EmbedSession {
  /** `ses_…`, the id the API shows. */
  readonly id: string;
  readonly tokenHash: string;
  readonly orgId: string;
  readonly mode: Mode;
  readonly requestId: string;
  readonly recipientId: string;
  /** The serialized origin (`https://app.example.com`) that may frame the page. */
  readonly origin: string;
  readonly createdAt: string;
  /** An unused session is refused from this instant on. */
  readonly expiresAt: string;
  /** When the first load consumed it; null while unused. */
  readonly usedAt: string | null;
}

/**
 * Embedded signing sessions. The clear token exists only in the API's answer; the store keeps its SHA-256.
 * `consume` is the single-use rule: of any number of concurrent first loads, exactly one is told `true`.
 */
export interface EmbedSessionStore {
  insert(session: EmbedSession): StoreResult<void>;
  /** The session with this token hash in any tenant (the token is the credential), or null. */
  findByTokenHash(tokenHash: string): StoreResult<EmbedSession | null>;
  /**
   * Marks the session used at `at` if it is still unused and `at` is before its expiry; `true` when this
   * call did so, `false` when it was already used, expired, or no such session exists.
   */
  consume(tokenHash: string, at: string): StoreResult<boolean>;
}
