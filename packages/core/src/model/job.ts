import type { Mode } from './tenant.js';

/** Background work, each kind handled by one worker handler. */
export const JOB_KINDS = ['mail.invite', 'mail.remind', 'mail.completed', 'seal', 'expire', 'remind.auto', 'webhook.dispatch', 'webhook.deliver'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * A durable unit of background work, written in the same transaction as the change that calls for it
 * (the transactional outbox, applied to work instead of facts).
 */
export interface Job {
  readonly id: string;
  readonly kind: JobKind;
  readonly orgId: string;
  readonly mode: Mode;
  /** Identifiers only (never secrets): handlers load what they need. */
  readonly payload: Readonly<Record<string, string>>;
  /** Not before this time. */
  readonly runAt: string;
  /** Attempts started so far. */
  readonly attempts: number;
  /** At most one job with this key ever exists: a second enqueue is a no-op. */
  readonly dedupeKey: string | null;
  readonly createdAt: string;
  readonly lastError: string | null;
}
