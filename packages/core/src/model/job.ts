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
  /**
   * Identifiers only (never secrets): handlers load what they need. Besides what the enqueuer wrote it holds
   * the notes earlier runs left (`JobQueue.annotate`, keys in JOB_NOTES), so a run knows what already happened.
   */
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

/**
 * Payload keys a run adds to its job (`JobQueue.annotate`) to tell later runs of the same job what already
 * happened outside, so they skip it. Enqueuers never use these keys.
 */
export const JOB_NOTES = {
  /** When the job's mail was accepted by the SMTP server (or the test mailbox): a later run sends nothing. */
  mailAcceptedAt: 'mailAcceptedAt',
} as const;

/** A job as the queue holds it, for operators: the job, whether it was buried, and who holds it. */
export interface QueuedJob extends Job {
  /** Given up on (permanent failure or too many attempts): kept with its last error, never claimed until revived. */
  readonly buried: boolean;
  /**
   * The worker working on it and until when; null when nobody is. An `until` in the past means that worker
   * stopped renewing it (it died or stalled): another worker may take the job over.
   */
  readonly lease: { readonly worker: string; readonly until: string } | null;
}

/** Which jobs an operator lists; every given condition must hold. */
export interface JobFilter {
  /** Only these kinds (all kinds when absent or empty). */
  readonly kinds?: readonly JobKind[];
  /** Only jobs that failed at least once and are not done: backing off before their next attempt, or buried. */
  readonly failedOnly?: boolean;
  /** Only jobs about this signature request (their payload's `requestId`). */
  readonly requestId?: string;
  /** Only these jobs. */
  readonly ids?: readonly string[];
  /** At most this many, soonest `runAt` first (ties by id). */
  readonly limit: number;
}

/**
 * Where a job stands at `now`, for an operator: `running` (a worker holds a live lease), `buried`,
 * `backing-off` (it failed and waits for its next attempt), `due` (claimable now; a lease that ran out
 * means its worker died), or `scheduled` (for later).
 */
export type JobState = 'running' | 'buried' | 'backing-off' | 'due' | 'scheduled';

export const jobState = (job: QueuedJob, now: string): JobState =>
  job.buried
    ? 'buried'
    : job.lease !== null && job.lease.until > now
      ? 'running'
      : job.lastError !== null && job.runAt > now
        ? 'backing-off'
        : job.runAt <= now
          ? 'due'
          : 'scheduled';
