import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import type { Stores } from '../../ports/stores';
import type { JobHandler } from '../jobs/job-handler';
import { tenantOf } from '../jobs/load-job-request';
import { dispatchEvent } from './delivery-records';
import type { WebhookDeps } from './webhook-deps';

/** `webhook.dispatch`: fan an event out to its subscribed endpoints (in the job's commit). */
export const handleWebhookDispatch =
  (deps: Pick<WebhookDeps, 'ids' | 'clock'>): JobHandler =>
  (job) =>
    TE.right((tx: Stores) => pipe(dispatchEvent(tx, deps, tenantOf(job), job.payload.eventId ?? ''), TE.map(() => undefined)));
