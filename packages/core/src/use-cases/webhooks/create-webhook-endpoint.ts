import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { EventType } from '../../model/event.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { Command } from '../command.js';
import { check, requireScope } from '../policy.js';
import { unstorableText } from '../../storable-text.js';
import { checkUrl } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';
import { newWebhookSecret } from './webhook-deps.js';

export interface CreatedEndpoint {
  readonly endpoint: WebhookEndpoint;
  /** The signing secret, in clear only in this result. */
  readonly secret: string;
}

export interface CreateWebhookEndpointInput {
  readonly url: string;
  readonly events: readonly EventType[];
  readonly description?: string | null;
}

/**
 * Creates an endpoint in the caller's mode (test events go only to test endpoints). The secret is returned
 * once and stored only encrypted. The URL is checked now and again at every delivery.
 *
 * @example
 * const created = await pipe(
 *   createWebhookEndpoint(deps)(me, { url: 'https://hooks.example.com/esig', events: ['request.completed'] }),
 *   TE.chainW(execute(deps)),
 * )();
 * if (E.isRight(created)) console.log(created.right.secret); // shown once
 */
export const createWebhookEndpoint =
  (deps: WebhookDeps) =>
  (p: Principal, input: CreateWebhookEndpointInput): TE.TaskEither<DomainError, Command<CreatedEndpoint>> =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => check([unstorableText(input)])),
      TE.chainW(() => checkUrl(deps, input.url)),
      TE.map(() => (tx) => {
        const at = deps.clock.now().toISOString();
        const secret = newWebhookSecret(deps.crypto);
        const endpoint: WebhookEndpoint = {
          id: deps.ids.next('whe'),
          orgId: p.tenant.orgId,
          mode: p.tenant.mode,
          url: input.url,
          events: [...new Set(input.events)],
          description: input.description ?? null,
          enabled: true,
          disabledReason: null,
          disabledAt: null,
          secrets: [{ sealed: deps.secrets.seal(secret), createdAt: at, retiresAt: null }],
          consecutiveFinalFailures: 0,
          failingSince: null,
          createdAt: at,
          updatedAt: at,
          version: 1,
        };
        return pipe(tx.webhookEndpoints.insert(endpoint), TE.map(() => ({ endpoint, secret })));
      }),
    );
