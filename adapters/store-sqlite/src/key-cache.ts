import type { ApiKey } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import type { Conn } from './connection.js';

/**
 * Keys looked up by secret hash, kept while nothing can have revoked them. Every authenticated request
 * looks its key up, and on a busy file that read (a fresh WAL snapshot, an index probe, a decoded row) is a
 * measurable share of a small request; checking that the cache is still valid costs one pragma instead.
 *
 * An entry is good while both of these are unchanged since it was read:
 * - `PRAGMA data_version` on the write connection, which changes whenever any *other* connection commits:
 *   another process on the same file (`esig keys revoke`, a second server, `esig worker`), or another
 *   store opened in this process. A commit made elsewhere, revocation or not, empties the cache.
 * - this process's revocation epoch. This process's own commits go through the write connection and do not
 *   move its data_version, so a transaction that revoked a key bumps the epoch when it ends, before anyone
 *   in it is answered. Not earlier: between the revoking statement and the COMMIT, a lookup on the read
 *   connection still sees the key unrevoked and caches it; the bump after the COMMIT throws that away.
 *
 * The validity stamp is read before the row, in the same synchronous call, so a commit elsewhere between
 * the two makes the entry stale rather than wrong. Unknown hashes are not cached: a stream of made-up keys
 * must not grow memory. Revoked keys may be cached (revocation is final; the caller refuses them).
 */
export interface KeyCache {
  /** The key whose secret hash is `secretHash`: cached while still valid, else from `load` (and cached). */
  lookup<Err>(secretHash: string, load: () => E.Either<Err, ApiKey | null>): E.Either<Err, ApiKey | null>;
  /** A revocation ran inside the write connection's transaction: every entry is stale once it ends. */
  revoking(): void;
  /** The write connection's transaction (a group) has ended, committed or not. */
  transactionEnded(): void;
}

/** Enough for every key a deployment really uses; past it the oldest entry goes. */
export const KEY_CACHE_SIZE = 1_000;

interface Entry {
  readonly key: ApiKey;
  readonly epoch: number;
  readonly dataVersion: number;
}

export const createKeyCache = (write: Conn, size: number = KEY_CACHE_SIZE): KeyCache => {
  const entries = new Map<string, Entry>();
  let epoch = 0;
  let revokedInTransaction = false;
  const dataVersion = (): number => write.prepare('PRAGMA data_version').pluck().get() as number;

  return {
    lookup: (secretHash, load) => {
      const now = { epoch, dataVersion: dataVersion() };
      const hit = entries.get(secretHash);
      if (hit !== undefined && hit.epoch === now.epoch && hit.dataVersion === now.dataVersion) return E.right(hit.key);
      if (hit !== undefined) entries.delete(secretHash);
      const loaded = load();
      if (E.isLeft(loaded) || loaded.right === null) return loaded;
      if (entries.size >= size) entries.delete(entries.keys().next().value!);
      // Every later hit hands out this same object: frozen, so that no caller can change (widen the scopes
      // of, un-revoke) the key for the others.
      const key = Object.freeze({ ...loaded.right, scopes: Object.freeze([...loaded.right.scopes]) });
      entries.set(secretHash, { key, ...now });
      return E.right(key);
    },
    revoking: () => {
      revokedInTransaction = true;
    },
    transactionEnded: () => {
      if (!revokedInTransaction) return;
      revokedInTransaction = false;
      epoch++;
    },
  };
};
