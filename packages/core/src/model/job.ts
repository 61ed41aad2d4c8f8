import type { Mode } from './tenant.js';

/** Background work, each kind handled by one worker handler. */
export const JOB_KINDS = ['mail.invite', 'mail.remind', 'mail.completed', 'seal.complete', 'seal', 'expire', 'remind.auto', 'webhook.dispatch', 'webhook.deliver'] as const;
export type JobKind = (typeof JOB_KINDS)[number];

/**
 * What each kind of job is about: identifiers only (never secrets); handlers load what they need.
 */
export interface JobPayloads {
  readonly 'mail.invite': { readonly requestId: string; readonly recipientId: string };
  readonly 'mail.remind': { readonly requestId: string; readonly recipientId: string };
  readonly 'mail.completed': { readonly requestId: string; readonly recipientId: string };
  /**
   * After the last signature: render the finished PDF and the certificate, store them and make the request
   * COMPLETED. A kind of its own so that a worker of an older release, whose `seal` expects a request it
   * already made COMPLETED, never takes one and drops it as done.
   */
  readonly 'seal.complete': { readonly requestId: string };
  /** The same, queued by older releases for a request they stored COMPLETED at its last signature. */
  readonly seal: { readonly requestId: string };
  readonly expire: { readonly requestId: string };
  /** `round`: the how-manieth automatic reminder round this is (1 for the first). */
  readonly 'remind.auto': { readonly requestId: string; readonly round: number };
  readonly 'webhook.dispatch': { readonly eventId: string };
  readonly 'webhook.deliver': { readonly deliveryId: string };
}

/** A job kind of `K` with the payload of that kind: checking `job.kind` narrows `job.payload`. */
export type JobWorkOf<K extends JobKind> = { readonly [P in K]: { readonly kind: P; readonly payload: JobPayloads[P] } }[K];

/** Any kind of job with the payload of that kind. */
export type JobWork = JobWorkOf<JobKind>;

/**
 * What a run of a job tells later runs of the same job about what already happened outside
 * (`JobQueue.annotate`), so they skip it.
 */
export interface JobNotes {
  /** When the job's mail was accepted by the SMTP server (or the test mailbox): a later run sends nothing. */
  readonly mailAcceptedAt?: string;
}

/** What the queue keeps about a job besides its work. */
export interface JobMeta {
  readonly id: string;
  readonly orgId: string;
  readonly mode: Mode;
  /** What earlier runs noted (`JobQueue.annotate`); empty for a first run. */
  readonly notes: JobNotes;
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
 * A durable unit of background work, written in the same transaction as the change that calls for it
 * (the transactional outbox, applied to work instead of facts). Decoded at the store's edge: a job's payload
 * always has the fields its kind needs.
 */
export type Job = JobWork & JobMeta;

/** A job of the kinds `K`, its payload narrowed to theirs. */
export type JobOf<K extends JobKind> = JobWorkOf<K> & JobMeta;

/** The signature request a job is about, if its kind is about one. */
export const requestIdOf = (job: JobWork): string | null => ('requestId' in job.payload ? job.payload.requestId : null);

/** A job as the queue holds it, for operators: the job, whether it was buried, and who holds it. */
export type QueuedJob = Job & {
  /** Given up on (permanent failure or too many attempts): kept with its last error, never claimed until revived. */
  readonly buried: boolean;
  /**
   * The worker working on it and until when; null when nobody is. An `until` in the past means that worker
   * stopped renewing it (it died or stalled): another worker may take the job over.
   */
  readonly lease: { readonly worker: string; readonly until: string } | null;
};

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

/**
 * The dedupe keys of a sent request's scheduled jobs: its expiry, and each round of its automatic reminders.
 * One place for them, because a request that ends cancels them by these keys (`JobQueue.cancelWaiting`).
 */
export const expireJobKey = (requestId: string): string => `expire:${requestId}`;
/** Every round's key starts with this, and no other request's key does: a request id holds no `:`. */
export const autoRemindJobPrefix = (requestId: string): string => `remind.auto:${requestId}:`;
export const autoRemindJobKey = (requestId: string, round: number): string => `${autoRemindJobPrefix(requestId)}${round}`;

/**
 * A prefix `JobQueue.cancelWaiting` takes: printable ASCII, at least one character (every dedupe key esig makes is
 * such), so that a store that compares keys byte by byte can read it as a range of its index.
 */
export const isDedupeKeyPrefix = (prefix: string): boolean => /^[\x20-\x7e]+$/.test(prefix);
