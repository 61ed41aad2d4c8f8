import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Clock } from '../../ports/clock.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import { awaitingSeal } from '../../state-machine.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence } from '../signing/records.js';
import type { JobHandler } from './job-handler.js';
import { nothingToRecord } from './job-handler.js';
import { tenantOf } from './load-job-request.js';

/** `expire` (scheduled at `expiresAt` when the request was sent): a request still open ends as EXPIRED. */
export const handleExpire =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator }): JobHandler<'expire'> =>
  (job) =>
    TE.right((tx: Stores) => {
      const now = deps.clock.now();
      const at = now.toISOString();
      return pipe(
        tx.signatureRequests.findByIdForUpdate(tenantOf(job), job.payload.requestId),
        TE.chainW((r) =>
          // A request whose signers have all signed is being sealed: it completes, whatever its deadline.
          r === null || r.status !== 'SENT' || awaitingSeal(r) || r.expiresAt === null || r.expiresAt > at
            ? nothingToRecord(tx)
            : pipe(
                applyCommand(tx, r, { type: 'Expire' }, now),
                TE.chainFirstW((x) => tx.documents.setStatusForRequest(tenantOf(job), x, 'EXPIRED')),
                TE.chainFirstW((x) => appendEvent(tx, deps.ids, x, 'request.expired', at, { status: x.status, expired_at: at })),
                TE.chainW((x) => appendEvidence(tx, deps.ids, x, 'expired', at, null, null)),
              ),
        ),
      );
    });
