import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import type { Clock } from '../../ports/clock.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import { autoRemindJobKey } from '../../model/job.js';
import type { Stores } from '../../ports/stores.js';
import { awaitingSeal, signersDue } from '../../state-machine.js';
import { enqueueJob } from '../signing/records.js';
import type { JobHandler } from './job-handler.js';
import { nothingToRecord } from './job-handler.js';
import { tenantOf } from './load-job-request.js';

/**
 * `remind.auto`: while a request is open, remind the signers whose turn it is and who have not signed,
 * then schedule the next round. Kept in the job table, so reminders survive restarts.
 */
export const handleAutoRemind =
  (deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly reminderIntervalMs: number }): JobHandler<'remind.auto'> =>
  (job) =>
    TE.right((tx: Stores) => {
      const now = deps.clock.now();
      const at = now.toISOString();
      const round = job.payload.round;
      return pipe(
        tx.signatureRequests.findByIdForUpdate(tenantOf(job), job.payload.requestId),
        TE.chainW((r) =>
          // Every signer has signed: no more rounds (the seal completes the request).
          r === null || r.status !== 'SENT' || awaitingSeal(r)
            ? nothingToRecord(tx)
            : pipe(
                signersDue(r),
                TE.traverseSeqArray((s) => enqueueJob(tx, deps.ids, r, { kind: 'mail.remind', payload: { requestId: r.id, recipientId: s.id }, runAt: at, createdAt: at, dedupeKey: `remind:${s.id}:auto:${round}` })),
                TE.chainW(() => {
                  const next = new Date(now.getTime() + deps.reminderIntervalMs).toISOString();
                  return r.expiresAt !== null && next >= r.expiresAt
                    ? TE.right(undefined)
                    : enqueueJob(tx, deps.ids, r, { kind: 'remind.auto', payload: { requestId: r.id, round: round + 1 }, runAt: next, createdAt: at, dedupeKey: autoRemindJobKey(r.id, round + 1) });
                }),
              ),
        ),
      );
    });
