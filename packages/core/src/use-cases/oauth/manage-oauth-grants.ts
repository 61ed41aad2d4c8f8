import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { StoreError } from '../../errors.js';
import type { OAuthGrant } from '../../model/oauth.js';
import type { Tenant } from '../../model/tenant.js';
import type { Clock } from '../../ports/clock.js';
import type { Stores } from '../../ports/stores.js';

/**
 * Every OAuth grant of a tenant, oldest first, revoked ones included (an operator's view: the `esig oauth
 * grants list` command).
 *
 * @example
 * const grants = await listOAuthGrants(deps)(tenant)();
 */
export const listOAuthGrants =
  (deps: { readonly stores: Stores }) =>
  (tenant: Tenant): TE.TaskEither<StoreError, readonly OAuthGrant[]> => {
    const page = (after: OAuthGrant | null, acc: readonly OAuthGrant[]): TE.TaskEither<StoreError, readonly OAuthGrant[]> =>
      pipe(
        deps.stores.oauth.listGrants(tenant, { limit: 100, order: 'asc', after: after === null ? null : { createdAt: after.createdAt, id: after.id }, filter: undefined }),
        TE.chain((p) => (p.hasMore ? page(p.items[p.items.length - 1]!, [...acc, ...p.items]) : TE.right([...acc, ...p.items]))),
      );
    return page(null, []);
  };

/**
 * Revokes a grant by id (an operator's action: `esig oauth grants revoke`): its access and refresh tokens
 * stop working at once. Returns the grant as it is now, or null for an unknown id.
 *
 * @example
 * await deps.uow.transaction(revokeOAuthGrant(deps)('oag_…'))();
 */
export const revokeOAuthGrant =
  (deps: { readonly clock: Clock }) =>
  (grantId: string) =>
  (tx: Stores): TE.TaskEither<StoreError, OAuthGrant | null> =>
    pipe(
      tx.oauth.revokeGrant(grantId, deps.clock.now().toISOString()),
      TE.chain(() => tx.oauth.findGrant(grantId)),
    );
