import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import { notFound } from '../../errors';
import type { DomainEvent } from '../../model/event';
import type { Principal } from '../../model/principal';
import type { Tenant } from '../../model/tenant';
import type { DeliveryAttempt, WebhookDelivery, WebhookEndpoint } from '../../model/webhook';
import type { CursorSigner, ListEnvelope } from '../../pagination';
import type { AttemptFilter } from '../../ports/webhook-delivery-store';
import type { Stores } from '../../ports/stores';
import { webhookBody } from '../../webhook-rules';
import type { Command } from '../command';
import type { PageRequest } from '../list-page';
import { listPage } from '../list-page';
import { requireScope } from '../policy';
import type { WebhookDeps } from './webhook-deps';

/** Creates a pending delivery of `body` to an endpoint and schedules its first attempt now. */
export const createDelivery = (
  tx: Stores,
  deps: Pick<WebhookDeps, 'ids'>,
  endpoint: WebhookEndpoint,
  event: { readonly id: string; readonly type: string },
  body: string,
  at: string,
): TE.TaskEither<DomainError, WebhookDelivery> => {
  const delivery: WebhookDelivery = {
    id: deps.ids.next('dlv'),
    orgId: endpoint.orgId,
    mode: endpoint.mode,
    endpointId: endpoint.id,
    eventId: event.id,
    eventType: event.type,
    body,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: at,
    lastAttemptAt: null,
    lastOutcome: null,
    createdAt: at,
    version: 1,
  };
  return pipe(
    tx.webhookDeliveries.insert(delivery),
    TE.chainW(() =>
      tx.jobs.enqueue({ id: deps.ids.next('job'), kind: 'webhook.deliver', orgId: delivery.orgId, mode: delivery.mode, payload: { deliveryId: delivery.id }, runAt: at, dedupeKey: `deliver:${delivery.id}:1`, createdAt: at }),
    ),
    TE.map(() => delivery),
  );
};

/** Fans one event out to the enabled endpoints of its org and mode that subscribe to its type. */
export const dispatchEvent = (tx: Stores, deps: Pick<WebhookDeps, 'ids' | 'clock'>, tenant: Tenant, eventId: string): TE.TaskEither<DomainError, number> =>
  pipe(
    tx.events.findById(tenant, eventId),
    TE.chainW((event) =>
      event === null
        ? TE.right(0)
        : pipe(
            tx.webhookEndpoints.findSubscribed(tenant, event.type),
            TE.chainW((endpoints) => {
              const at = deps.clock.now().toISOString();
              const body = webhookBody(event);
              return pipe(
                endpoints,
                TE.traverseSeqArray((e) => createDelivery(tx, deps, e, event, body, at)),
                TE.map((ds) => ds.length),
              );
            }),
          ),
    ),
  );

/**
 * A test delivery to one endpoint: a `webhook.test` event (not in the event log, never subscribed to),
 * signed and delivered like any other, so a receiver can be checked end to end.
 */
export const testWebhookEndpoint =
  (deps: WebhookDeps) =>
  (p: Principal, endpointId: string): Command<WebhookDelivery> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => tx.webhookEndpoints.findById(p.tenant, endpointId)),
      TE.chainW((e) => (e === null ? TE.left(notFound('webhook_endpoint', endpointId)) : TE.right(e))),
      TE.chainW((e) => {
        const at = deps.clock.now().toISOString();
        const event = { id: deps.ids.next('evt'), type: 'webhook.test', createdAt: at, mode: e.mode, redeliveryOf: null, data: { endpoint_id: e.id } };
        return createDelivery(tx, deps, e, event, webhookBody(event), at);
      }),
    );

/**
 * Resends a delivery's event from the log: a new event (new id, `redelivery_of` the original) in a new
 * delivery to the same endpoint, whatever became of the original.
 */
export const resendWebhookDelivery =
  (deps: WebhookDeps) =>
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
