import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { DeliveryAttempt } from '../../model/webhook.js';
import type { CursorSigner, ListEnvelope } from '../../pagination.js';
import type { Stores } from '../../ports/stores.js';
import type { AttemptFilter } from '../../ports/webhook-delivery-store.js';
import type { PageRequest } from '../list-page.js';
import { listPage } from '../list-page.js';
import { requireScope } from '../policy.js';

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
