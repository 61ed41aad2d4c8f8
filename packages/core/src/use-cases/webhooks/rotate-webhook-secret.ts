import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Principal } from '../../model/principal.js';
import type { WebhookEndpoint } from '../../model/webhook.js';
import { SECRET_OVERLAP_MS, secretsInForce } from '../../webhook-rules.js';
import type { Command } from '../command.js';
import { requireScope } from '../policy.js';
import type { CreatedEndpoint } from './create-webhook-endpoint.js';
import { loadEndpoint } from './endpoint-access.js';
import type { WebhookDeps } from './webhook-deps.js';
import { newWebhookSecret } from './webhook-deps.js';

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
      TE.chainW(() => loadEndpoint(tx, p, id)),
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
