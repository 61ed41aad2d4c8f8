import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { notFound } from '../../errors.js';
import type { DomainEvent } from '../../model/event.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookDelivery } from '../../model/webhook.js';
import { TEST_EVENT_TYPE, webhookBody } from '../../webhook-rules.js';
import type { Command } from '../command.js';
import { requireScope } from '../policy.js';
import { createDelivery } from './delivery-records.js';
import { deliverable } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';

/**
 * Resends a delivery's event from the log: a new event (new id, `redelivery_of` the original) in a new
 * delivery to the same endpoint, whatever became of the original. `deliveryId` may also be the id of an entry of
 * the delivery log (an attempt, whose ids share the `dlv_` prefix): that entry's delivery is resent. To a disabled
 * endpoint: refused, `InvalidState` (enable it first).
 */
export const resendWebhookDelivery =
  (deps: Pick<WebhookDeps, 'ids' | 'clock'>) =>
  (p: Principal, deliveryId: string): Command<WebhookDelivery> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => tx.webhookDeliveries.findById(p.tenant, deliveryId)),
      TE.chainW((d) =>
        d !== null
          ? TE.right(d)
          : pipe(
              tx.webhookDeliveries.findAttempt(p.tenant, deliveryId),
              TE.chainW((a) => (a === null ? TE.right(null) : tx.webhookDeliveries.findById(p.tenant, a.deliveryId))),
            ),
      ),
      TE.chainW((d) => (d === null ? TE.left(notFound('webhook_delivery', deliveryId)) : TE.right(d))),
      TE.chainW((d) =>
        pipe(
          tx.webhookEndpoints.findById(p.tenant, d.endpointId),
          TE.chainW((e) => (e === null ? TE.left(notFound('webhook_endpoint', d.endpointId)) : pipe(deliverable(e), TE.map((e) => ({ d, e }))))),
        ),
      ),
      TE.chainW(({ d, e }) => {
        const at = deps.clock.now().toISOString();
        const original = E.getOrElse<unknown, { data?: unknown }>(() => ({}))(E.tryCatch(() => JSON.parse(d.body) as { data?: unknown }, (x) => x));
        const event = { id: deps.ids.next('evt'), type: d.eventType, createdAt: at, mode: d.mode, redeliveryOf: d.eventId, data: original.data ?? {} };
        const stored: TE.TaskEither<DomainError, void> =
          d.eventType === TEST_EVENT_TYPE ? TE.right(undefined) : tx.events.append({ ...event, orgId: d.orgId, type: event.type as DomainEvent['type'], data: event.data as DomainEvent['data'] });
        return pipe(stored, TE.chainW(() => createDelivery(tx, deps, e, event, webhookBody(event), at)));
      }),
    );
