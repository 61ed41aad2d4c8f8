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
import type { JobHandlers } from './job-handler.js';

/** What the job handlers need: stores and time, mail, the renderer, and (for webhooks) delivery. */
export type JobHandlerDeps = MailJobDeps & {
  readonly renderer: DocumentRenderer;
  /** Automatic reminders: the gap between rounds once started. Default 72 h. */
  readonly reminderIntervalMs?: number | null;
  /**
   * Webhook delivery. Without it the webhook kinds have no handler: fine for a backend that creates no
   * webhook endpoints, since an org without endpoints queues no webhook jobs.
   */
  readonly webhooks?: Pick<WebhookDeps, 'secrets' | 'sender' | 'retryScale' | 'random' | 'receiverGate'>;
};

/**
 * The handler of every job kind the core enqueues, for `startWorker` or `runDueJobs`. These take a request
 * from `send` to its sealed PDF: invitations and reminders (`mail.invite`, `mail.remind`, `remind.auto`),
 * `seal.complete` (and older releases' `seal`), the completed notices (`mail.completed`) and `expire`; with `webhooks`, also `webhook.dispatch`
 * and `webhook.deliver`.
 *
 * @example
 * const handlers = jobHandlers({ ...deps, mail: () => testMailboxTransport(deps, tenant), publicUrl, renderer: pdf.renderer });
 * await runDueJobs({ ...deps, handlers })()();
 */
export const jobHandlers = (deps: JobHandlerDeps): JobHandlers => {
  const mail = handleInvitationMail(deps);
  const webhooks = deps.webhooks === undefined ? {} : { 'webhook.dispatch': handleWebhookDispatch(deps), 'webhook.deliver': handleWebhookDeliver({ ...deps, ...deps.webhooks }) };
  return {
    'mail.invite': mail,
    'mail.remind': mail,
    'mail.completed': handleCompletedMail(deps),
    'seal.complete': handleSeal(deps),
    seal: handleSeal(deps),
    expire: handleExpire(deps),
    'remind.auto': handleAutoRemind({ ...deps, reminderIntervalMs: deps.reminderIntervalMs ?? 72 * 3_600_000 }),
    ...webhooks,
  };
};
