import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/** A response as it is kept for replay. */
export interface StoredResponse {
  readonly status: number;
  /**
   * The body as first sent (JSON text); `executeIdempotently` stores it sealed by the `SecretBox` and opens
   * it to replay, so a secret shown once never rests in clear, unless the caller said the response holds
   * none (`IdempotencyContext.sealResponse: false`): then `inClear` marks the body stored as sent.
   */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Set on a record's response whose body is stored as sent. Absent (as on every record older than it): sealed. */
  readonly inClear?: true;
}

export interface IdempotencyRecord {
  readonly tenant: Tenant;
  readonly key: string;
  /** Digest of who asked and what for (credential, method, path, body): see `fingerprintSource`. */
  readonly fingerprint: string;
  readonly state: 'in_progress' | 'completed';
  readonly response: StoredResponse | null;
  readonly createdAt: string;
  /** While `in_progress`: until when the first caller holds the key; after that another may take over. */
  readonly lockedUntil: string;
  /** When the record stops counting; after that the key is free again. */
  readonly expiresAt: string;
}

/**
 * Which claim of a key a caller holds: its record's fingerprint and lock. A record taken over gets a lock of its own,
 * later than the one it replaced (a take-over comes only once that lock has run out). Two claims can share both only
 * if the first one's record went (purged by a clock a day ahead, say) and the key was claimed again within the same
 * millisecond with the same request: either caller may then complete or release the other's claim, but one record
 * completes only once, so the command still commits once.
 */
export type IdempotencyClaim = Pick<IdempotencyRecord, 'fingerprint' | 'lockedUntil'>;

/** The most records one `purgeExpired` may delete: a batch holds the writer (on SQLite, the only one) while it runs. */
export const MAX_PURGE_BATCH = 10_000;

/** What one purge batch did: how many records it deleted, and the latest `expiresAt` among them (null if none). */
export interface PurgedBatch {
  readonly deleted: number;
  readonly through: string | null;
}

/**
 * Idempotency records, keyed by (tenant, key). Used inside UnitOfWork transactions so that a completed
 * record commits with the writes of the operation it records.
 */
export interface IdempotencyStore {
  find(tenant: Tenant, key: string): StoreResult<IdempotencyRecord | null>;
  /** Inserts unless a record for (tenant, key) exists; `false` means another caller got there first. */
  insertIfAbsent(record: IdempotencyRecord): StoreResult<boolean>;
  /**
   * Inserts a record for a key that has none. Fails with ConcurrentModification (`idempotency_key`), inserting
   * nothing, when one exists; a record another transaction has inserted and not yet committed is waited for
   * first. Unlike `insertIfAbsent`, its answer is success or failure only, so a transaction that defers its writes
   * may send it unanswered, and its failure then fails the transaction (see `TransactionOptions.deferWrites`).
   */
  insertNew(record: IdempotencyRecord): StoreResult<void>;
  /**
   * Replaces the record for (tenant, key) wholesale (take-over of an expired lock or expired record), if it is
   * still `previous`: the same fingerprint, state, creation, lock and expiry. `false` means it changed or went
   * meanwhile, and nothing was written: another caller decided on the same record first. Two callers that read
   * one record and both replace it get exactly one `true`, even in transactions running side by side.
   */
  replace(record: IdempotencyRecord, previous: IdempotencyRecord): StoreResult<boolean>;
  /**
   * Marks the record completed with the response to replay, if it is still `claim`: `in_progress`, with the claim's
   * fingerprint and lock. Otherwise it fails with ConcurrentModification and writes nothing: the record is gone
   * (purged, released), or another caller took the key over once the claim's lock ran out (a holder slower than its
   * lock, or cut off from the store for a while) and has run, or runs, the command itself. The caller's transaction
   * must then not commit, or the command would have run twice.
   */
  complete(tenant: Tenant, key: string, response: StoredResponse, claim: IdempotencyClaim): StoreResult<void>;
  /**
   * Deletes the record so the key can be used again (the operation failed for reasons worth retrying), if it is still
   * `claim` (as for `complete`); a record another caller holds or has completed is left as it is.
   */
  release(tenant: Tenant, key: string, claim: IdempotencyClaim): StoreResult<void>;
  /**
   * Deletes at most `limit` of the records whose `expiresAt` is at or before `now` (and at or after `from`,
   * when given), the earliest first, in every tenant. A record replaced meanwhile with a later `expiresAt` is
   * kept. `limit` is a whole number from 1 to `MAX_PURGE_BATCH`; any other fails with StoreFailure and
   * deletes nothing.
   *
   * A caller working through a backlog passes the previous batch's `through` as `from`, so each batch starts
   * where the last one ended rather than reading again past what it deleted (PostgreSQL keeps deleted rows
   * in the index until VACUUM). `from` is inclusive: records that share the last expiry are not skipped.
   */
  purgeExpired(now: string, limit: number, from?: string | null): StoreResult<PurgedBatch>;
}
