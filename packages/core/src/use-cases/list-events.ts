import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { DomainError } from '../errors.js';
import type { DomainEvent } from '../model/event.js';
import type { Principal } from '../model/principal.js';
import type { CursorSigner, ListEnvelope } from '../pagination.js';
import type { EventFilter } from '../ports/event-outbox.js';
import type { Stores } from '../ports/stores.js';
import type { PageRequest } from './list-page.js';
import { listPage } from './list-page.js';
import { requireScope } from './policy.js';

/**
 * The event log of the caller's org and mode, for reconciling by polling (webhooks are an acceleration,
 * not the source of truth). Readable with either read scope, since events concern both resources.
 *
 * @example
 * const events = await listEvents(deps)(me, { order: 'asc' }, { type: 'request.completed' }, (e) => e.data)();
 */
export const listEvents =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: EventFilter, present: (e: DomainEvent) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'signature_requests:read'),
      TE.chainW(() =>
        listPage(deps.cursors, 'events', page, filter, `type=${filter.type ?? ''}`, (q) => deps.stores.events.list(p.tenant, q), present),
      ),
    );
