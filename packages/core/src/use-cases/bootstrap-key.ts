import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { Org } from '../model/api-key.js';
import type { GrantedScope } from '../model/scopes.js';
import type { Mode } from '../model/tenant.js';
import type { Clock } from '../ports/clock.js';
import type { Crypto } from '../ports/crypto.js';
import type { IdGenerator } from '../ports/id-generator.js';
import type { Command } from './command.js';
import type { IssuedKey } from './issue-api-key.js';
import { issueApiKey } from './issue-api-key.js';

export interface BootstrapKeyInput {
  readonly orgName: string;
  readonly mode: Mode;
  readonly scopes: readonly GrantedScope[];
  readonly name: string;
}

/**
 * Operator bootstrap (CLI and first start): creates the org if it does not exist and a key in it. Not
 * reachable through the API: whoever runs it already holds the database.
 */
export const bootstrapKey =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly crypto: Crypto }) =>
  (input: BootstrapKeyInput): Command<IssuedKey & { readonly org: Org }> =>
  (tx) =>
    pipe(
      tx.orgs.findByName(input.orgName),
      TE.chain((found) => {
        if (found !== null) return TE.right(found);
        const org: Org = { id: deps.ids.next('org'), name: input.orgName, createdAt: deps.clock.now().toISOString() };
        return pipe(tx.orgs.insert(org), TE.map(() => org));
      }),
      TE.map((org) => ({ org, ...issueApiKey(deps, { orgId: org.id, mode: input.mode, name: input.name, scopes: input.scopes }) })),
      TE.chainFirst((r) => tx.apiKeys.insert(r.key)),
    );
