import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { DomainError } from '../../errors.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import type { CursorSigner, ListEnvelope } from '../../pagination.js';
import type { Stores } from '../../ports/stores.js';
import type { PageRequest } from '../list-page.js';
import { listPage } from '../list-page.js';
import { requireScope } from '../policy.js';

/** The caller's endpoints, a page at a time, each shown through `present`. */
export const listWebhookEndpoints =
  (deps: { readonly stores: Stores; readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, present: (e: WebhookEndpoint) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'webhooks:read'),
      TE.chainW(() => listPage(deps.cursors, 'webhook_endpoints', page, undefined, '', (q) => deps.stores.webhookEndpoints.list(p.tenant, q), present)),
    );
