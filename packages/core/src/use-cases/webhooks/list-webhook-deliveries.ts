import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import type { Principal } from '../../model/principal';
import type { DeliveryAttempt } from '../../model/webhook';
import type { CursorSigner, ListEnvelope } from '../../pagination';
import type { Stores } from '../../ports/stores';
import type { AttemptFilter } from '../../ports/webhook-delivery-store';
import type { PageRequest } from '../list-page';
import { listPage } from '../list-page';
import { requireScope } from '../policy';

/** The delivery log: one entry per attempt, newest first by default, by endpoint or event if asked. */
export const listWebhookDeliveries =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, filter: AttemptFilter, present: (a: DeliveryAttempt) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'webhooks:read'),
      TE.chainW(() =>
        listPage(deps.cursors, 'webhook_deliveries', page, filter, `endpoint=${filter.endpointId ?? ''}&event=${filter.eventId ?? ''}`, (q) => deps.stores.webhookDeliveries.listAttempts(p.tenant, q), present),
      ),
    );
