import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { EventType } from '../../model/event.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { Command } from '../command.js';
import { check, requireScope } from '../policy.js';
import { unstorableText } from '../../storable-text.js';
import { checkUrl, loadEndpoint } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';

export interface UpdateWebhookEndpointInput {
  readonly url?: string;
  readonly events?: readonly EventType[];
  readonly description?: string | null;
  readonly enabled?: boolean;
}

/**
 * Changes the URL, the subscribed events, the description, or whether it is enabled. Enabling a disabled
 * endpoint clears its failure record; deliveries of events from then on go to it again.
 */
export const updateWebhookEndpoint =
  (deps: WebhookDeps) =>
  (
    p: Principal,
    id: string,
    input: UpdateWebhookEndpointInput,
  ): TE.TaskEither<DomainError, Command<WebhookEndpoint>> =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => check([unstorableText(input)])),
      TE.chainW(() => (input.url === undefined ? TE.right(undefined) : checkUrl(deps, input.url))),
      TE.map(() => (tx) =>
        pipe(
          loadEndpoint(tx, p, id),
          TE.chainW((e) => {
            const at = deps.clock.now().toISOString();
            const enabling = input.enabled === true && !e.enabled;
            const disabling = input.enabled === false && e.enabled;
            const next: WebhookEndpoint = {
              ...e,
              url: input.url ?? e.url,
              events: input.events ? [...new Set(input.events)] : e.events,
              description: input.description === undefined ? e.description : input.description,
              enabled: input.enabled ?? e.enabled,
              disabledReason: enabling ? null : disabling ? 'disabled through the API' : e.disabledReason,
              disabledAt: enabling ? null : disabling ? at : e.disabledAt,
              consecutiveFinalFailures: enabling ? 0 : e.consecutiveFinalFailures,
              failingSince: enabling ? null : e.failingSince,
              updatedAt: at,
              version: e.version + 1,
            };
            return pipe(
              tx.webhookEndpoints.update(next),
              TE.chainW(() => (disabling ? tx.webhookDeliveries.cancelPending(p.tenant, e.id, at) : TE.right(0))),
              TE.map(() => next),
            );
          }),
        ),
      ),
    );
