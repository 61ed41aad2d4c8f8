import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import type { Principal } from '../../model/principal';
import type { WebhookEndpoint } from '../../model/webhook';
import type { Stores } from '../../ports/stores';
import { requireScope } from '../policy';
import { loadEndpoint } from './endpoint-access';

/** One endpoint of the caller's org and mode (never its secrets), with why it was disabled if it is. */
export const getWebhookEndpoint =
  (deps: { readonly stores: Stores }) =>
  (p: Principal, id: string): TE.TaskEither<DomainError, WebhookEndpoint> =>
    pipe(requireScope(p, 'webhooks:read'), TE.chainW(() => loadEndpoint(deps.stores, p, id)));
