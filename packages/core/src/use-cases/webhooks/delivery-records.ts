import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Tenant } from '../../model/tenant.js';
import type { WebhookDelivery, WebhookEndpoint } from '../../model/webhook.js';
import type { Stores } from '../../ports/stores.js';
import { webhookBody } from '../../webhook-rules.js';
import type { WebhookDeps } from './webhook-deps.js';

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

/** One pending delivery of `event` to each of `endpoints`, each with its first attempt due at `at`; how many. */
export const createDeliveries = (
  tx: Stores,
  deps: Pick<WebhookDeps, 'ids'>,
  endpoints: readonly WebhookEndpoint[],
  event: Parameters<typeof webhookBody>[0],
  at: string,
): TE.TaskEither<DomainError, number> => {
  const body = webhookBody(event);
  return pipe(
    endpoints,
    TE.traverseSeqArray((e) => createDelivery(tx, deps, e, event, body, at)),
    TE.map((ds) => ds.length),
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
            TE.chainW((endpoints) => createDeliveries(tx, deps, endpoints, event, deps.clock.now().toISOString())),
          ),
    ),
  );
