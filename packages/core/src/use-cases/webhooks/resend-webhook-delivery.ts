import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import { notFound } from '../../errors';
import type { DomainEvent } from '../../model/event';
import type { Principal } from '../../model/principal';
import type { WebhookDelivery } from '../../model/webhook';
import { webhookBody } from '../../webhook-rules';
import type { Command } from '../command';
import { requireScope } from '../policy';
import { createDelivery } from './delivery-records';
import type { WebhookDeps } from './webhook-deps';

/**
 * Resends a delivery's event from the log: a new event (new id, `redelivery_of` the original) in a new
 * delivery to the same endpoint, whatever became of the original.
 */
export const resendWebhookDelivery =
  (deps: Pick<WebhookDeps, 'ids' | 'clock'>) =>
  (p: Principal, deliveryId: string): Command<WebhookDelivery> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => tx.webhookDeliveries.findById(p.tenant, deliveryId)),
      TE.chainW((d) => (d === null ? TE.left(notFound('webhook_delivery', deliveryId)) : TE.right(d))),
      TE.chainW((d) =>
        pipe(
          tx.webhookEndpoints.findById(p.tenant, d.endpointId),
          TE.chainW((e) => (e === null ? TE.left(notFound('webhook_endpoint', d.endpointId)) : TE.right({ d, e }))),
        ),
      ),
      TE.chainW(({ d, e }) => {
        const at = deps.clock.now().toISOString();
        const original = E.getOrElse<unknown, { data?: unknown }>(() => ({}))(E.tryCatch(() => JSON.parse(d.body) as { data?: unknown }, (x) => x));
        const event = { id: deps.ids.next('evt'), type: d.eventType, createdAt: at, mode: d.mode, redeliveryOf: d.eventId, data: original.data ?? {} };
        const stored: TE.TaskEither<DomainError, void> =
          d.eventType === 'webhook.test' ? TE.right(undefined) : tx.events.append({ ...event, orgId: d.orgId, type: event.type as DomainEvent['type'], data: event.data as DomainEvent['data'] });
        return pipe(stored, TE.chainW(() => createDelivery(tx, deps, e, event, webhookBody(event), at)));
      }),
    );
