import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Stores } from '../../ports/stores.js';
import type { JobHandler } from '../jobs/job-handler.js';
import { tenantOf } from '../jobs/load-job-request.js';
import { dispatchEvent } from './delivery-records.js';
import type { WebhookDeps } from './webhook-deps.js';

/** `webhook.dispatch`: fan an event out to its subscribed endpoints (in the job's commit). */
export const handleWebhookDispatch =
  (deps: Pick<WebhookDeps, 'ids' | 'clock'>): JobHandler<'webhook.dispatch'> =>
  (job) =>
    TE.right((tx: Stores) => pipe(dispatchEvent(tx, deps, tenantOf(job), job.payload.eventId), TE.map(() => undefined)));
