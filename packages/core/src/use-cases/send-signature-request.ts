import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../task-either.js';
import type { ClientInfo } from '../model/evidence.js';
import { autoRemindJobKey, expireJobKey } from '../model/job.js';
import type { Principal } from '../model/principal.js';
import type { SignatureRequest } from '../model/signature-request.js';
import type { Clock } from '../ports/clock.js';
import type { IdGenerator } from '../ports/id-generator.js';
import { signersDue } from '../state-machine.js';
import type { Command } from './command.js';
import { applyCommand, loadRequest, requireScope } from './policy.js';
import { appendEvent, appendEvidence, enqueueJob, inviteDueSigners } from './signing/records.js';

export interface SendDeps {
  readonly clock: Clock;
  readonly ids: IdGenerator;
  /** Re-notify unsigned signers this long after sending, and again at the same interval; null: never. */
  readonly reminderIntervalMs?: number | null;
}

/**
 * DRAFT → SENT. In one transaction: the new state, the documents marked PENDING, a `request.sent` event,
 * the evidence entry, and the jobs that follow from it — an invitation per signer whose turn it is, the
 * expiry at `expiresAt`, the first automatic reminder. The mail goes out from the worker, so a crash after
 * this commit loses no invitation and a replayed send (idempotency) or a retried job sends none twice.
 *
 * @example
 * const sent = await execute(deps)(sendSignatureRequest(deps)(me, requestId))();
 * // then run the jobs (startWorker, or runDueJobs) to mail the invitations
 */
export const sendSignatureRequest =
  (deps: SendDeps) =>
  (p: Principal, requestId: string, client: ClientInfo | null = null): Command<SignatureRequest> =>
  (tx) => {
    const now = deps.clock.now();
    const at = now.toISOString();
    return pipe(
      requireScope(p, 'signature_requests:write'),
      TE.chainW(() => loadRequest(tx, p, requestId)),
      TE.chainW((req) => applyCommand(tx, req, { type: 'Send' }, now)),
      TE.chainFirstW((req) => tx.documents.setStatusForRequest(p.tenant, req, 'PENDING')),
      TE.chainFirstW((req) =>
        appendEvent(tx, deps.ids, req, 'request.sent', at, {
          status: req.status,
          sent_at: req.sentAt,
          signing_order: req.signingOrder,
          document_ids: req.documentIds,
          recipient_ids: req.recipients.map((r) => r.id),
        }),
      ),
      TE.chainFirstW((req) => appendEvidence(tx, deps.ids, req, 'sent', at, null, client)),
      TE.chainFirstW((req) => inviteDueSigners(tx, deps.ids, req, signersDue(req), at)),
      TE.chainFirstW((req) =>
        req.expiresAt === null ? TE.right(undefined) : enqueueJob(tx, deps.ids, req, { kind: 'expire', payload: { requestId: req.id }, runAt: req.expiresAt, createdAt: at, dedupeKey: expireJobKey(req.id) }),
      ),
      TE.chainFirstW((req) => {
        const every = deps.reminderIntervalMs ?? null;
        if (every === null || every <= 0) return TE.right(undefined);
        const runAt = new Date(now.getTime() + every).toISOString();
        return enqueueJob(tx, deps.ids, req, { kind: 'remind.auto', payload: { requestId: req.id, round: 1 }, runAt, createdAt: at, dedupeKey: autoRemindJobKey(req.id, 1) });
      }),
    );
  };
