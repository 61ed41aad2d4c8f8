import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import { completedMail } from '../../mail/templates';
import type { MailJobDeps } from './handle-invitation-mail';
import { mintSigningLink } from './handle-invitation-mail';
import type { JobHandler } from './job-handler';
import { jobFailure, nothingToRecord } from './job-handler';
import { loadJobRequest, tenantOf } from './load-job-request';
import { sendMailOnce } from './send-mail-once';

/** `mail.completed`: tells a recipient (signer or cc) the request is complete, linking the finished PDF; once per job (`sendMailOnce`). */
export const handleCompletedMail =
  (deps: MailJobDeps): JobHandler =>
  (job) =>
    pipe(
      loadJobRequest(deps.stores, job),
      TE.chainW((request) => {
        const recipient = request?.recipients.find((r) => r.id === job.payload.recipientId);
        if (!request || request.status !== 'COMPLETED' || !recipient) return TE.right(nothingToRecord);
        return pipe(
          sendMailOnce(deps, job, () =>
            pipe(
              mintSigningLink(deps, tenantOf(job), request.id, recipient.id),
              TE.chainW((link) =>
                pipe(
                  deps.mail(tenantOf(job)).send(completedMail({ request, recipient, link, testMode: request.mode === 'test', messageId: `<${job.id}@esig>` })),
                  TE.mapLeft((e) => jobFailure(e.detail, e.permanent)),
                ),
              ),
            ),
          ),
          TE.map(() => nothingToRecord),
        );
      }),
    );
