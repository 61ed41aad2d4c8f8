import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { Principal } from '../model/principal';
import type { ApiLogEntry } from '../model/webhook';
import type { CursorSigner, ListEnvelope } from '../pagination';
import type { Stores } from '../ports/stores';
import type { PageRequest } from './list-page';
import { listPage } from './list-page';
import { requireScope } from './policy';

/** The request log of the caller's org and mode: API calls and webhook calls. */
export const listApiLog =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: { readonly kind?: ApiLogEntry['kind'] }, present: (e: ApiLogEntry) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'logs:read'),
      TE.chainW(() => listPage(deps.cursors, 'logs', page, filter, `kind=${filter.kind ?? ''}`, (q) => deps.stores.apiLog.list(p.tenant, q), present)),
    );
