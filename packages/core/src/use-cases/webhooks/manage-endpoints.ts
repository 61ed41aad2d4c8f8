import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { DomainError } from '../../errors';
import { notFound, validationFailed } from '../../errors';
import type { EventType } from '../../model/event';
import type { Principal } from '../../model/principal';
import type { WebhookEndpoint } from '../../model/webhook';
import type { CursorSigner, ListEnvelope } from '../../pagination';
import { SECRET_OVERLAP_MS, secretsInForce } from '../../webhook-rules';
import type { Command } from '../command';
import type { PageRequest } from '../list-page';
import { listPage } from '../list-page';
import { requireScope } from '../policy';
import type { WebhookDeps } from './webhook-deps';
import { newWebhookSecret } from './webhook-deps';

export interface CreatedEndpoint {
  readonly endpoint: WebhookEndpoint;
  /** The signing secret, in clear only in this result. */
  readonly secret: string;
}

/** Checks the target rules (HTTPS, no credentials, public addresses) before an endpoint is stored. */
const checkUrl = (deps: Pick<WebhookDeps, 'sender'>, url: string): TE.TaskEither<DomainError, void> =>
  pipe(
    TE.fromTask(deps.sender.checkTarget(url)),
    TE.chainW((r) => (r.ok ? TE.right(undefined) : TE.left(validationFailed([{ path: 'url', message: r.reason }], `url: ${r.reason}`)))),
  );

const load = (deps: Pick<WebhookDeps, 'stores'>, p: Principal, id: string, tx = deps.stores) =>
  pipe(
    tx.webhookEndpoints.findById(p.tenant, id),
    TE.chainW((e) => (e === null ? TE.left<DomainError, WebhookEndpoint>(notFound('webhook_endpoint', id)) : TE.right(e))),
  );

/**
 * Creates an endpoint in the caller's mode (test events go only to test endpoints). The secret is returned
 * once and stored only encrypted. The URL is checked now and again at every delivery.
 */
export const createWebhookEndpoint =
  (deps: WebhookDeps) =>
  (p: Principal, input: { readonly url: string; readonly events: readonly EventType[]; readonly description?: string | null }): TE.TaskEither<DomainError, Command<CreatedEndpoint>> =>
    pipe(
      requireScope(p, 'webhooks:write'),
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

export const getWebhookEndpoint = (deps: WebhookDeps) => (p: Principal, id: string) =>
  pipe(requireScope(p, 'webhooks:read'), TE.chainW(() => load(deps, p, id)));

export const listWebhookEndpoints =
  (deps: WebhookDeps & { readonly cursors: CursorSigner }) =>
  <B>(p: Principal, page: PageRequest, present: (e: WebhookEndpoint) => B): TE.TaskEither<DomainError, ListEnvelope<B>> =>
    pipe(
      requireScope(p, 'webhooks:read'),
      TE.chainW(() => listPage(deps.cursors, 'webhook_endpoints', page, undefined, '', (q) => deps.stores.webhookEndpoints.list(p.tenant, q), present)),
    );

/**
 * Changes the URL, the subscribed events, the description, or whether it is enabled. Enabling a disabled
 * endpoint clears its failure record; deliveries of events from then on go to it again.
 */
export const updateWebhookEndpoint =
  (deps: WebhookDeps) =>
  (
    p: Principal,
    id: string,
    input: { readonly url?: string; readonly events?: readonly EventType[]; readonly description?: string | null; readonly enabled?: boolean },
  ): TE.TaskEither<DomainError, Command<WebhookEndpoint>> =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => (input.url === undefined ? TE.right(undefined) : checkUrl(deps, input.url))),
      TE.map(() => (tx) =>
        pipe(
          load(deps, p, id, tx),
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

/** Deletes an endpoint; its waiting deliveries are cancelled (the log stays). */
export const deleteWebhookEndpoint =
  (deps: WebhookDeps) =>
  (p: Principal, id: string): Command<WebhookEndpoint> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => load(deps, p, id, tx)),
      TE.chainFirstW((e) => tx.webhookDeliveries.cancelPending(p.tenant, e.id, deps.clock.now().toISOString())),
      TE.chainFirstW((e) => tx.webhookEndpoints.delete(p.tenant, e.id)),
    );

/**
 * A new signing secret, returned once. The previous one keeps signing for the overlap window (24 h): every
 * delivery meanwhile carries both `v1` signatures, new first. Secrets already past their window are dropped.
 */
export const rotateWebhookSecret =
  (deps: WebhookDeps) =>
  (p: Principal, id: string): Command<CreatedEndpoint> =>
  (tx) =>
    pipe(
      requireScope(p, 'webhooks:write'),
      TE.chainW(() => load(deps, p, id, tx)),
      TE.chainW((e) => {
        const now = deps.clock.now();
        const at = now.toISOString();
        const retiresAt = new Date(now.getTime() + SECRET_OVERLAP_MS).toISOString();
        const secret = newWebhookSecret(deps.crypto);
        const kept = secretsInForce(e.secrets, at).map((s) => (s.retiresAt === null ? { ...s, retiresAt } : s));
        const next: WebhookEndpoint = { ...e, secrets: [{ sealed: deps.secrets.seal(secret), createdAt: at, retiresAt: null }, ...kept], updatedAt: at, version: e.version + 1 };
        return pipe(tx.webhookEndpoints.update(next), TE.map(() => ({ endpoint: next, secret })));
      }),
    );
