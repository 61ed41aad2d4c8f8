import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { Command } from '../command.js';
import { requireScope } from '../policy.js';
import { loadEndpoint } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';

/** Deletes an endpoint; its waiting deliveries are cancelled (the log stays). */
export const deleteWebhookEndpoint =
  (deps: Pick<WebhookDeps, 'clock'>) =>
  (p: Principal, id: string): Command<WebhookEndpoint> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => loadEndpoint(tx, p, id)),
      TE.chainFirstW((e) => tx.webhookDeliveries.cancelPending(p.tenant, e.id, deps.clock.now().toISOString())),
      TE.chainFirstW((e) => tx.webhookEndpoints.delete(p.tenant, e.id)),
    );
