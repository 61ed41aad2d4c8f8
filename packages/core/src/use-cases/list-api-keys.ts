import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { ApiKey } from '../model/api-key.js';
import type { Principal } from '../model/principal.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { Stores } from '../ports/stores.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

/** Lists the keys of the caller's org and mode (records only; secrets are never kept). */
export const listApiKeys =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, present: (k: ApiKey) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'api_keys:write'),
      TE.chainW(() =>
        listPage(deps.cursors, 'api_keys', page, undefined, '', (q) => deps.stores.apiKeys.list(p.tenant, q), present),
      ),
    );
