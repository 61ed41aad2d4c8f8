import type { Tenant } from '../model/tenant.js';
import type { StoreResult } from './store-result.js';
import * as TE from '../task-either.js';
import { storeFailure } from '../errors.js';

/**
 * What a stored PDF is: an uploaded document's bytes as uploaded, or one of a completed request's two sealed
 * artifacts (the finished PDF, the evidence certificate). A store may name them as it likes, as long as no
 * two keys share a name.
 */
export type ContentKey =
  | { readonly kind: 'upload'; readonly documentId: string }
  | { readonly kind: 'finished'; readonly requestId: string }
  | { readonly kind: 'certificate'; readonly requestId: string };

declare const STAGED: unique symbol;

/**
 * Bytes written ahead of the transaction that stores them under a key (`DocumentContentStore.stage`), as an
 * opaque handle: only a store's `stage` makes one (through `stagedContent`), and only that store's `put` and
 * `discard` read it.
 */
export interface StagedContent {
  readonly [STAGED]: true;
  /** The bytes themselves, for a store that writes them whole at `put`; null when the store holds them already. */
  readonly bytes: Uint8Array | null;
  /** The store's name for what it wrote, or null when it wrote nothing yet. */
  readonly ref: string | null;
  /** How many bytes were staged. */
  readonly size: number;
}

/** For store adapters: the handle their `stage` answers. */
export const stagedContent = (s: { readonly bytes: Uint8Array | null; readonly ref: string | null; readonly size: number }): StagedContent =>
  ({ bytes: s.bytes, ref: s.ref, size: s.size }) as StagedContent;

/** Whether `content` is a staged handle rather than plain bytes. */
export const isStaged = (content: StagedContent | Uint8Array): content is StagedContent => !(content instanceof Uint8Array);

/**
 * The bytes of uploaded documents and of sealed artifacts. Their keys are written in the same transaction as
 * their metadata; the bytes themselves may be written before it (`stage`), so that a large content does not
 * hold the transaction, or the process, while it is written.
 */
export interface DocumentContentStore {
  /**
   * Writes `bytes` ahead of the transaction that will store them under their key, outside any transaction: a
   * store may write them in pieces, each on its own, so no single write grows with the content. Nothing is
   * stored under any key yet: `put` the handle in the transaction, or `discard` it. Content staged and never
   * put is removed by `purgeStaged`. Called inside a transaction, the content is written in that transaction
   * (what is safe, and what nobody should need). `bytes` must not change until this has answered; after, they
   * are the caller's again.
   */
  stage(tenant: Tenant, bytes: Uint8Array): StoreResult<StagedContent>;
  /**
   * Stores `content` under `key` in this tenant, replacing any stored there: a handle staged in this tenant by
   * this store (only the key is written then), or plain bytes, copied. A handle whose content is gone (purged,
   * discarded, staged in another tenant) fails with StoreFailure, and stores nothing.
   */
  put(tenant: Tenant, key: ContentKey, content: StagedContent | Uint8Array): StoreResult<void>;
  /** A copy of the bytes under `key`; `null` when absent in this tenant. */
  get(tenant: Tenant, key: ContentKey): StoreResult<Uint8Array | null>;
  /**
   * Best effort, for a command that failed after staging: removes staged content that no key names in this
   * tenant. A handle that was put is left alone, so calling this whatever the command's outcome is safe.
   */
  discard(tenant: Tenant, staged: StagedContent): StoreResult<void>;
  /**
   * Removes content staged before `before` (an ISO time) that no key names, in every tenant (what a crash
   * between `stage` and the commit left), at most `limit` of the store's rows; answers how many rows it
   * removed (0 for a store that keeps nothing staged).
   */
  purgeStaged(before: string, limit: number): StoreResult<number>;
}

/** The part of a content store that writes whole: `writingWhole` makes the rest. */
export interface WholeContentStore {
  /** Stores a copy of `bytes` under `key` in this tenant, replacing any stored there. */
  put(tenant: Tenant, key: ContentKey, bytes: Uint8Array): StoreResult<void>;
  get(tenant: Tenant, key: ContentKey): StoreResult<Uint8Array | null>;
}

/**
 * A `DocumentContentStore` from one that writes each content whole at `put` (an object store, a database row):
 * `stage` keeps a copy of the bytes in the handle, `put` writes them, and there is never anything to discard
 * or purge. A handle without bytes (staged by another store) fails at `put` with StoreFailure.
 *
 * @example
 * const contents = writingWhole({ put: (t, key, bytes) => myS3Contents.put(t, key, bytes), get: (t, key) => myS3Contents.get(t, key) });
 */
export const writingWhole = (store: WholeContentStore): DocumentContentStore => ({
  // A copy, the caller's buffer being its own again once this answers: Uint8Array's own slice, a memcpy
  // (`Uint8Array.from` copies element by element, 30 ms for 15 MB; a Buffer's `slice` is a view, no copy).
  stage: (_tenant, bytes) => TE.right(stagedContent({ bytes: Uint8Array.prototype.slice.call(bytes), ref: null, size: bytes.byteLength })),
  put: (tenant, key, content) => {
    if (!isStaged(content)) return store.put(tenant, key, content);
    return content.bytes === null ? TE.left(storeFailure(new Error('This content was staged by another store.'))) : store.put(tenant, key, content.bytes);
  },
  get: (tenant, key) => store.get(tenant, key),
  discard: () => TE.right(undefined),
  purgeStaged: () => TE.right(0),
});
