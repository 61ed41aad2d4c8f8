import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import { invitationMail } from '../../mail/templates.js';
import type { StoreError } from '../../errors.js';
import type { Mode, Tenant } from '../../model/tenant.js';
import type { Clock } from '../../ports/clock.js';
import type { Crypto } from '../../ports/crypto.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { MailTransport } from '../../ports/mail-transport.js';
import type { Stores } from '../../ports/stores.js';
import type { UnitOfWork } from '../../ports/unit-of-work.js';
import { awaitingSeal } from '../../state-machine.js';
import { applyCommand } from '../policy.js';
import { appendEvent, appendEvidence } from '../signing/records.js';
import type { JobHandler } from './job-handler.js';
import { jobFailure, nothingToRecord } from './job-handler.js';
import { loadJobRequest, tenantOf } from './load-job-request.js';
import { sendMailOnce } from './send-mail-once.js';

export interface MailJobDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
  /** The transport for a mode: live mail to the recipient; test mail to the test sink, never the recipient. */
  readonly mail: (tenant: Tenant) => MailTransport;
  readonly publicUrl: string;
}

/** Mints a signing link for a recipient (stored as the token's hash) and returns its URL. */
export const mintSigningLink = (deps: MailJobDeps, tenant: { orgId: string; mode: Mode }, requestId: string, recipientId: string): TE.TaskEither<StoreError, string> => {
  const token = deps.crypto.randomAlphanumeric(43);
  return pipe(
    deps.uow.transaction((tx) =>
      tx.signingLinks.insert({ tokenHash: deps.crypto.sha256Hex(token), orgId: tenant.orgId, mode: tenant.mode, requestId, recipientId, createdAt: deps.clock.now().toISOString(), expiresAt: null }),
    ),
    TE.map(() => `${deps.publicUrl}/sign/${token}`),
  );
};

/**
 * `mail.invite` and `mail.remind`: while the request is open and the recipient has not finished, mint a
 * link, mail it, then record `NOTIFIED`, `signer.notified` and the evidence. The mail goes out once per
 * job (`sendMailOnce`): a run after an accepted send only records. The Message-ID is the job's, so a
 * repeat after a crash between the server's acceptance and its note is recognisable as the same message.
 */
export const handleInvitationMail =
  (deps: MailJobDeps): JobHandler<'mail.invite' | 'mail.remind'> =>
  (job) =>
    pipe(
      loadJobRequest(deps.stores, job),
      TE.chainW((request) => {
        const recipient = request?.recipients.find((r) => r.id === job.payload.recipientId);
        // Nothing to invite to once the request ended or its deadline passed (the expiry job may not have run yet).
        const pastDeadline = request?.expiresAt != null && request.expiresAt <= deps.clock.now().toISOString();
        if (!request || request.status !== 'SENT' || pastDeadline || !recipient || recipient.status === 'SIGNED' || recipient.status === 'DECLINED')
          return TE.right(nothingToRecord);
        const reminder = job.kind === 'mail.remind';
        return pipe(
          // A repeated run (the earlier one's mail was accepted, its outcome not recorded) mints and sends nothing.
          sendMailOnce(deps, job, () =>
            pipe(
              mintSigningLink(deps, tenantOf(job), request.id, recipient.id),
              TE.chainW((link) =>
                pipe(
                  deps.mail(tenantOf(job)).send(invitationMail({ request, recipient, link, testMode: request.mode === 'test', messageId: `<${job.id}@esig>`, reminder })),
                  TE.mapLeft((e) => jobFailure(e.detail, e.permanent)),
                ),
              ),
            ),
          ),
          TE.map(() => (tx: Stores) => {
            const now = deps.clock.now();
            const at = now.toISOString();
            return pipe(
              tx.signatureRequests.findByIdForUpdate(tenantOf(job), request.id),
              TE.chainW((current) =>
                // Once every signer has signed the request takes no Notify: the evidence the seal is
                // rendering into the certificate must not grow under it.
                current === null || current.status !== 'SENT' || awaitingSeal(current)
                  ? TE.right(undefined)
                  : pipe(
                      applyCommand(tx, current, { type: 'Notify', recipientId: recipient.id }, now),
                      TE.chainW((r) => appendEvent(tx, deps.ids, r, 'signer.notified', at, { recipient_id: recipient.id, kind: reminder ? 'reminder' : 'invitation', notified_at: at })),
                      TE.chainW(() => appendEvidence(tx, deps.ids, current, reminder ? 'reminded' : 'notified', at, recipient.id, null)),
                    ),
              ),
            );
          }),
        );
      }),
    );
