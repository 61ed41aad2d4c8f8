import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { Principal } from '../../model/principal';
import type { WebhookEndpoint } from '../../model/webhook';
import type { Command } from '../command';
import { requireScope } from '../policy';
import { loadEndpoint } from './endpoint-access';
import type { WebhookDeps } from './webhook-deps';

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
