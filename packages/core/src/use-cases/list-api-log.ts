import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { Principal } from '../model/principal.js';
import type { ApiLogEntry } from '../model/webhook.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { Stores } from '../ports/stores.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

/** The request log of the caller's org and mode: API calls and webhook calls. */
export const listApiLog =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: { readonly kind?: ApiLogEntry['kind'] }, present: (e: ApiLogEntry) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'logs:read'),
      TE.chainW(() => listPage(deps.cursors, 'logs', page, filter, `kind=${filter.kind ?? ''}`, (q) => deps.stores.apiLog.list(p.tenant, q), present)),
    );
