import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../errors';
import type { DomainEvent } from '../model/event';
import type { Principal } from '../model/principal';
import type { CursorSigner, ListEnvelope } from '../pagination';
import type { EventFilter } from '../ports/event-outbox';
import type { Stores } from '../ports/stores';
import type { PageRequest } from './list-page';
import { listPage } from './list-page';
import { requireScope } from './policy';

/**
 * The event log of the caller's org and mode, for reconciling by polling (webhooks are an acceleration,
 * not the source of truth). Readable with either read scope, since events concern both resources.
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
