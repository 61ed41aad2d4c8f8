import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '../../task-either.js';
import { completedMail } from '../../mail/templates.js';
import type { MailJobDeps } from './handle-invitation-mail.js';
import { mintSigningLink } from './handle-invitation-mail.js';
import type { JobHandler } from './job-handler.js';
import { jobFailure, nothingToRecord } from './job-handler.js';
import { loadJobRequest, tenantOf } from './load-job-request.js';
import { sendMailOnce } from './send-mail-once.js';

/** `mail.completed`: tells a recipient (signer or cc) the request is complete, linking the finished PDF; once per job (`sendMailOnce`). */
export const handleCompletedMail =
  (deps: MailJobDeps): JobHandler<'mail.completed'> =>
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
