import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import { insufficientScope, notFound } from '../errors.js';
import type { ApiKey } from '../model/api-key.js';
import type { Principal } from '../model/principal.js';
import { scopesNotCovered } from '../model/scopes.js';
import type { Clock } from '../ports/clock.js';
import type { Command } from './command.js';
import { requireScope } from './policy.js';

/**
 * Revokes a key of the caller's org and mode at once; revoking twice is harmless. A caller may revoke only
 * keys it could have minted (scopes within its own), so a narrow `api_keys:write` key cannot lock out a
 * stronger one. The OAuth grants the key consented to are revoked with it.
 */
export const revokeApiKey =
  (deps: { readonly clock: Clock }) =>
  (p: Principal, keyId: string): Command<ApiKey> =>
  (tx) =>
    pipe(
      requireScope(p, 'api_keys:write'),
      TE.chainW(() => tx.apiKeys.findById(p.tenant, keyId)),
      TE.chainW((k) => (k === null ? TE.left(notFound('api_key', keyId)) : TE.right(k))),
      TE.chainFirstW((k) => {
        const beyond = scopesNotCovered(p.scopes, k.scopes);
        return beyond.length > 0 ? TE.left(insufficientScope(beyond[0]!)) : TE.right(undefined);
      }),
      TE.chainW(() => tx.apiKeys.revoke(p.tenant, keyId, deps.clock.now().toISOString())),
      // The key's consent goes with it: every OAuth grant it gave stops at once.
      TE.chainW(() => tx.oauth.revokeGrantsOfKey(keyId, deps.clock.now().toISOString())),
      TE.chainW(() => tx.apiKeys.findById(p.tenant, keyId)),
      TE.chainW((k) => (k === null ? TE.left(notFound('api_key', keyId)) : TE.right(k))),
    );
