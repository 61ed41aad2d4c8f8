import type * as TE from 'fp-ts/lib/TaskEither.js';
import type { StoreError } from '../../errors.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';

/**
 * How long a registered client may wait for its first consent. Registration (RFC 7591) takes no credential, so
 * anyone may register clients: one that never reached the consent page in this time is deleted, and the table
 * holds at most this long's registrations (which the per-address rate limit bounds) besides the clients in use.
 * A tool registers and sends its user to the consent page at once; one that comes back later registers again.
 */
export const UNUSED_OAUTH_CLIENT_TTL_MS: number = 24 * 60 * 60_000;

/** Clients deleted per batch: one statement holds the database's writer for milliseconds. */
export const UNUSED_OAUTH_CLIENT_PURGE_BATCH = 500;

/**
 * Deletes one batch of registered clients older than `UNUSED_OAUTH_CLIENT_TTL_MS` that no authorization code
 * and no grant names; answers how many. A caller runs it again while it answers a full batch.
 *
 * @example
 * const purge = purgeUnusedOAuthClients(deps);
 * const deleted = await purge()();
 */
export const purgeUnusedOAuthClients =
  (deps: { readonly stores: Stores; readonly clock: Clock }): ((batch?: number) => TE.TaskEither<StoreError, number>) =>
  (batch: number = UNUSED_OAUTH_CLIENT_PURGE_BATCH) =>
  // The time is read when the batch runs, not when it is built.
  () =>
    deps.stores.oauth.purgeUnusedClients(new Date(deps.clock.now().getTime() - UNUSED_OAUTH_CLIENT_TTL_MS).toISOString(), batch)();
