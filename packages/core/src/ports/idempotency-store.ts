import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';

/** A response as it is kept for replay. */
export interface StoredResponse {
  readonly status: number;
  /**
   * The body as first sent (JSON text); `executeIdempotently` stores it sealed by the `SecretBox` and opens
   * it to replay, so a secret shown once never rests in clear.
   */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
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

/** The resource of the ConcurrentModification that `IdempotencyStore.insert` fails with when the key is taken. */
export const IDEMPOTENCY_KEY_RESOURCE = 'idempotency_key';

/** The most records one `purgeExpired` may delete: a batch holds the writer (on SQLite, the only one) while it runs. */
export const MAX_PURGE_BATCH = 10_000;

/** What one purge batch did: how many records it deleted, and the latest `expiresAt` among them (null if none). */
export interface PurgedBatch {
  readonly deleted: number;
  readonly through: string | null;
}

/** What `IdempotencyStore.take` found: the key taken by another transaction, or taken for this one, with its record. */
export type TakenKey = { readonly held: false } | { readonly held: true; readonly record: IdempotencyRecord | null };

/**
 * Idempotency records, keyed by (tenant, key). Used inside UnitOfWork transactions so that a completed
 * record commits with the writes of the operation it records.
 */
export interface IdempotencyStore {
  find(tenant: Tenant, key: string): StoreResult<IdempotencyRecord | null>;
  /**
   * Optional; only in a transaction's stores. Takes (tenant, key) for the rest of the transaction without
   * waiting, then reads its record: `held: false` when another running transaction has it, without reading.
   * A record committed by a transaction that held the key before must be seen. Nothing is written: the key is
   * free again when the transaction ends, however it ends.
   *
   * A store whose transactions run side by side offers it so that `executeIdempotently` can claim a new key,
   * run its command and store its record in one transaction, one commit, while a concurrent duplicate is still
   * answered `IdempotencyInProgress` at once. Without it, the claim commits on its own first. Two keys may
   * share a hold by accident (a hash): one of them is then answered `IdempotencyInProgress`, never run twice;
   * the record's own uniqueness is what keeps a command from committing twice.
   */
  take?(tenant: Tenant, key: string): StoreResult<TakenKey>;
  /** Inserts unless a record for (tenant, key) exists; `false` means another caller got there first. */
  insertIfAbsent(record: IdempotencyRecord): StoreResult<boolean>;
  /**
   * Inserts a record whose key is free, and fails with ConcurrentModification on the resource
   * `IDEMPOTENCY_KEY_RESOURCE` (`idempotency_key`) when a record for (tenant, key) exists. Unlike
   * `insertIfAbsent` it need not answer at once: in a transaction run with `deferWrites` the store may send it
   * without waiting, and report the taken key when the transaction commits (which then commits nothing).
   */
  insert(record: IdempotencyRecord): StoreResult<void>;
  /** Replaces the record for (tenant, key) wholesale (take-over of an expired lock or expired record). */
  replace(record: IdempotencyRecord): StoreResult<void>;
  /** Marks the record completed with the response to replay. */
  complete(tenant: Tenant, key: string, response: StoredResponse): StoreResult<void>;
  /** Deletes the record so the key can be used again (the operation failed for reasons worth retrying). */
  release(tenant: Tenant, key: string): StoreResult<void>;
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
