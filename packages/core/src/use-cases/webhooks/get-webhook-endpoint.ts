import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { Stores } from '../../ports/stores.js';
import { requireScope } from '../policy.js';
import { loadEndpoint } from './endpoint-access.js';

/** One endpoint of the caller's org and mode (never its secrets), with why it was disabled if it is. */
export const getWebhookEndpoint =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, WebhookEndpoint> =>
    pipe(requireScope(p, 'webhooks:read'), TE.chainW(() => loadEndpoint(deps.stores, p, id)));
