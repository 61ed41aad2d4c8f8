import * as E from 'fp-ts/lib/Either.js';
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
 * How far back of the last clean run's cutoff the next run looks again: a registration that committed after a run
 * read the table, but with an earlier `createdAt`, or one stamped by a process whose clock runs behind, is still
 * found.
 */
export const UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS: number = 60 * 60_000;

/**
 * Deletes one batch of registered clients older than `UNUSED_OAUTH_CLIENT_TTL_MS` that no authorization code
 * and no grant names; answers how many. A caller runs it again while it answers a full batch. Once a run has
 * found fewer than a batch, every client registered before its cutoff has been looked at, and those in use stay
 * in use (codes and grants are never deleted): later runs look only from that cutoff (less
 * `UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS`) on, so the clients in use are walked once per process, not every hour.
 * One function serves one caller at a time: made per purger.
 *
 * @example
 * const purge = purgeUnusedOAuthClients(deps);
 * const deleted = await purge()();
 */
export const purgeUnusedOAuthClients = (deps: { readonly stores: Stores; readonly clock: Clock }): ((batch?: number) => TE.TaskEither<StoreError, number>) => {
  // Clients registered up to here were looked at by a run that finished.
  let after: string | null = null;
  return (batch: number = UNUSED_OAUTH_CLIENT_PURGE_BATCH) =>
    // The time is read when the batch runs, not when it is built.
    async () => {
      const now = deps.clock.now().getTime();
      const r = await deps.stores.oauth.purgeUnusedClients(after, new Date(now - UNUSED_OAUTH_CLIENT_TTL_MS).toISOString(), batch)();
      if (E.isRight(r) && r.right < batch) after = new Date(now - UNUSED_OAUTH_CLIENT_TTL_MS - UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS).toISOString();
      return r;
    };
};
