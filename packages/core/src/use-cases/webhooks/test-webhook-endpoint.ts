import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookDelivery } from '../../model/webhook.js';
import { TEST_EVENT_TYPE, webhookBody } from '../../webhook-rules.js';
import type { Command } from '../command.js';
import { requireScope } from '../policy.js';
import { createDelivery } from './delivery-records.js';
import { deliverable, loadEndpoint } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';

/**
 * A test delivery to one endpoint: a `webhook.test` event (not in the event log, never subscribed to),
 * signed and delivered like any other, so a receiver can be checked end to end. Its outcome leaves the endpoint's
 * health alone (a receiver being set up may refuse it, and must not be disabled for that); a disabled endpoint is
 * refused, `InvalidState`.
 */
export const testWebhookEndpoint =
  (deps: Pick<WebhookDeps, 'ids' | 'clock'>) =>
  (p: Principal, endpointId: string): Command<WebhookDelivery> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => loadEndpoint(tx, p, endpointId)),
      TE.chainW(deliverable),
      TE.chainW((e) => {
        const at = deps.clock.now().toISOString();
        const event = { id: deps.ids.next('evt'), type: TEST_EVENT_TYPE, createdAt: at, mode: e.mode, redeliveryOf: null, data: { endpoint_id: e.id } };
        return createDelivery(tx, deps, e, event, webhookBody(event), at);
      }),
    );
