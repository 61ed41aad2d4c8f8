import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import { invitationMail } from '../../mail/templates';
import type { Mode, Tenant } from '../../model/tenant';
import type { Clock } from '../../ports/clock';
import type { Crypto } from '../../ports/crypto';
import type { IdGenerator } from '../../ports/id-generator';
import type { MailTransport } from '../../ports/mail-transport';
import type { Stores } from '../../ports/stores';
import type { UnitOfWork } from '../../ports/unit-of-work';
import { applyCommand } from '../policy';
import { appendEvent, appendEvidence } from '../signing/records';
import type { JobHandler } from './job-handler';
import { jobFailure, nothingToRecord } from './job-handler';
import { loadJobRequest, tenantOf } from './load-job-request';
import { sendMailOnce } from './send-mail-once';

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
export const mintSigningLink = (deps: MailJobDeps, tenant: { orgId: string; mode: Mode }, requestId: string, recipientId: string) => {
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
  (deps: MailJobDeps): JobHandler =>
  (job) =>
    pipe(
      loadJobRequest(deps.stores, job),
      TE.chainW((request) => {
        const recipient = request?.recipients.find((r) => r.id === job.payload.recipientId);
        if (!request || request.status !== 'SENT' || !recipient || recipient.status === 'SIGNED' || recipient.status === 'DECLINED')
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
                current === null || current.status !== 'SENT'
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
