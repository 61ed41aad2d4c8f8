import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import { invalidState, notFound, validationFailed } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { Stores } from '../../ports/stores.js';
import type { WebhookDeps } from './webhook-deps.js';

/** Checks the target rules (HTTPS, no credentials, public addresses) before an endpoint is stored. */
export const checkUrl = (deps: Pick<WebhookDeps, 'sender'>, url: string): TE.TaskEither<DomainError, void> =>
  pipe(
    TE.fromTask(deps.sender.checkTarget(url)),
    TE.chainW((r) => (r.ok ? TE.right(undefined) : TE.left(validationFailed([{ path: 'url', message: r.reason }], `url: ${r.reason}`)))),
  );

/** An endpoint of the caller's org and mode; another's is simply not found. */
export const loadEndpoint = (stores: Stores, p: Principal, id: string): TE.TaskEither<DomainError, WebhookEndpoint> =>
  pipe(
    stores.webhookEndpoints.findById(p.tenant, id),
    TE.chainW((e) => (e === null ? TE.left<DomainError, WebhookEndpoint>(notFound('webhook_endpoint', id)) : TE.right(e))),
  );

/**
 * An endpoint a delivery made now would reach: not a disabled one, whose deliveries are cancelled when they come
 * due. A test or a resend to it is refused rather than accepted and then never attempted.
 */
export const deliverable = (e: WebhookEndpoint): TE.TaskEither<DomainError, WebhookEndpoint> =>
  e.enabled
    ? TE.right(e)
    : TE.left(invalidState(`The webhook endpoint ${e.id} is disabled${e.disabledReason ? ` (${e.disabledReason})` : ''}: enable it (PATCH {"enabled": true}) before sending to it.`));
