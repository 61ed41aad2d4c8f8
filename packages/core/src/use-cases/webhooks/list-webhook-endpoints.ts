import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import type { Principal } from '../../model/principal';
import type { WebhookEndpoint } from '../../model/webhook';
import type { CursorSigner, ListEnvelope } from '../../pagination';
import type { Stores } from '../../ports/stores';
import type { PageRequest } from '../list-page';
import { listPage } from '../list-page';
import { requireScope } from '../policy';

/** The caller's endpoints, a page at a time, each shown through `present`. */
export const listWebhookEndpoints =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, present: (e: WebhookEndpoint) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'webhooks:read'),
      TE.chainW(() => listPage(deps.cursors, 'webhook_endpoints', page, undefined, '', (q) => deps.stores.webhookEndpoints.list(p.tenant, q), present)),
    );
