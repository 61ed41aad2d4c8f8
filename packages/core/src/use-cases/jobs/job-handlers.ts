import type { JobKind } from '../../model/job.js';
import type { DocumentRenderer } from '../../ports/document-renderer.js';
import type { WebhookDeps } from '../webhooks/webhook-deps.js';
import { handleWebhookDeliver } from '../webhooks/handle-webhook-deliver.js';
import { handleWebhookDispatch } from '../webhooks/handle-webhook-dispatch.js';
import { handleAutoRemind } from './handle-auto-remind.js';
import { handleCompletedMail } from './handle-completed-mail.js';
import { handleExpire } from './handle-expire.js';
import type { MailJobDeps } from './handle-invitation-mail.js';
import { handleInvitationMail } from './handle-invitation-mail.js';
import { handleSeal } from './handle-seal.js';
import type { JobHandler } from './job-handler.js';

/** What every job handler needs together: stores and time, mail, the renderer, and webhook delivery. */
export type JobHandlerDeps = MailJobDeps &
  WebhookDeps & {
    readonly renderer: DocumentRenderer;
    /** Automatic reminders after sending, repeated at this interval (the reference server: 72 h). */
    readonly reminderIntervalMs: number;
  };

/**
 * The handler of every job kind the core enqueues, for `startWorker` or `runDueJobs`. All of them are
 * needed to take a request from `send` to its sealed PDF: invitations and reminders (`mail.invite`,
 * `mail.remind`, `remind.auto`), `seal`, the completed notices (`mail.completed`), `expire`; the webhook
 * kinds only run for orgs with endpoints (an org without webhooks queues no webhook jobs), so a backend
 * that uses none can give a `sender` that refuses every target.
 *
 * @example
 * const handlers = jobHandlers({ ...deps, mail: () => myTransport, publicUrl, renderer: pdf.renderer, sender, secrets, retryScale: 1, random: Math.random, reminderIntervalMs: 72 * 3_600_000 });
 * await runDueJobs({ ...deps, handlers })({ worker: 'cron' })();
 */
export const jobHandlers = (deps: JobHandlerDeps): { readonly [K in JobKind]: JobHandler } => {
  const mail = handleInvitationMail(deps);
  return {
    'mail.invite': mail,
    'mail.remind': mail,
    'mail.completed': handleCompletedMail(deps),
    seal: handleSeal(deps),
    expire: handleExpire(deps),
    'remind.auto': handleAutoRemind(deps),
    'webhook.dispatch': handleWebhookDispatch(deps),
    'webhook.deliver': handleWebhookDeliver(deps),
  };
};
