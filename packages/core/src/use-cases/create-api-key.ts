import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import { insufficientScope } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { GrantedScope } from '../model/scopes.js';
import { scopesNotCovered } from '../model/scopes.js';
import type { Clock } from '../ports/clock.js';
import type { Crypto } from '../ports/crypto.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Command } from './command.js';
import type { IssuedKey } from './issue-api-key.js';
import { issueApiKey } from './issue-api-key.js';
import { check, requireScope } from './policy.js';
import { unstorableText } from '../storable-text.js';

export interface CreateApiKeyInput {
  readonly name: string;
  readonly scopes: readonly GrantedScope[];
}

/**
 * Creates an API key for the caller's own org and mode, with at most the caller's scopes (a key can never
 * mint a stronger one). The secret is in the result once.
 */
export const createApiKey =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly crypto: Crypto }) =>
  (p: Principal, input: CreateApiKeyInput): Command<IssuedKey> =>
  (tx) =>
    pipe(
      requireScope(p, 'api_keys:write'),
      TE.chainW(() =>
        check([
          unstorableText(input),
          input.name.trim().length === 0 ? { path: 'name', message: 'must not be empty' } : null,
          input.scopes.length === 0 ? { path: 'scopes', message: 'must name at least one scope' } : null,
        ]),
      ),
      TE.chainW(() => {
        const beyond = scopesNotCovered(p.scopes, input.scopes);
        return beyond.length > 0 ? TE.left(insufficientScope(beyond[0]!)) : TE.right(undefined);
      }),
      TE.map(() => issueApiKey(deps, { orgId: p.tenant.orgId, mode: p.tenant.mode, name: input.name.trim(), scopes: input.scopes })),
      TE.chainFirstW((issued) => tx.apiKeys.insert(issued.key)),
    );
