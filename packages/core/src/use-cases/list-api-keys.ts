import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { ApiKey } from '../model/api-key';
import type { Principal } from '../model/principal';
import type { CursorSigner, ListEnvelope } from '../pagination';
import type { Stores } from '../ports/stores';
import type { PageRequest } from './list-page';
import { listPage } from './list-page';
import { requireScope } from './policy';

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
