import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../errors.js';
import type { Clock } from '../ports/clock.js';
import type { Stores } from '../ports/stores.js';

/**
 * How old content staged and never stored under a key must be before it is purged. A command puts what it
 * staged within seconds; content older than this was left by a command that failed and could not discard it,
 * or by a crash between staging and the commit. (A put of content purged meanwhile fails, storing nothing.)
 */
export const STAGED_CONTENT_TTL_MS: number = 60 * 60_000;

/** Rows (pieces, on SQLite: 256 KiB each) deleted per batch: one batch holds the writer for milliseconds. */
export const STAGED_CONTENT_PURGE_BATCH = 16;

/**
 * Deletes one batch of content staged more than `STAGED_CONTENT_TTL_MS` ago that no key names; answers how many
 * rows. A caller runs it again while it answers a full batch (`startPurger`).
 *
 * @example
 * const deleted = await purgeStagedContent(deps)()();
 */
export const purgeStagedContent =
  (deps: { readonly stores: Stores; readonly clock: Clock }) =>
  (batch: number = STAGED_CONTENT_PURGE_BATCH): TE.TaskEither<StoreError, number> =>
  // The time is read when the batch runs, not when it is built.
  () =>
    deps.stores.documentContents.purgeStaged(new Date(deps.clock.now().getTime() - STAGED_CONTENT_TTL_MS).toISOString(), batch)();
