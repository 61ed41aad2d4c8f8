import * as TE from '../../task-either.js';
import { pipe } from 'fp-ts/lib/function.js';
import type { DomainError } from '../../errors.js';
import type { ClientInfo, EvidenceAction } from '../../model/evidence.js';
import type { DomainEvent, EventType } from '../../model/event.js';
import type { JobWork } from '../../model/job.js';
import type { SignatureRequest } from '../../model/signature-request.js';
import type { IdGenerator } from '../../ports/id-generator.js';
import type { Stores } from '../../ports/stores.js';
import { MAX_INLINE_FANOUT } from '../../webhook-rules.js';
import { createDeliveries } from '../webhooks/delivery-records.js';

/**
 * The small writes every signing step makes together with its state change: an event in the outbox (ids,
 * states and times only), an evidence entry (which may hold the client's address), and follow-up jobs.
 */

/**
 * Records an event, in the caller's transaction: into the outbox and, when enabled endpoints of the event's
 * org and mode subscribe to its type, their deliveries. Up to `MAX_INLINE_FANOUT` endpoints, each delivery
 * and its first attempt's job are written here, due at the event's time; with more, one `webhook.dispatch`
 * job fans the event out later. Every event goes through here, so none that an endpoint waits for can exist
 * without its deliveries; an org without webhooks queues no work.
 */
export const recordEvent = (tx: Stores, ids: IdGenerator, event: DomainEvent): TE.TaskEither<DomainError, void> =>
  pipe(
    tx.events.append(event),
    TE.chainW(() => tx.webhookEndpoints.findSubscribed({ orgId: event.orgId, mode: event.mode }, event.type)),
    TE.chainW((subscribed): TE.TaskEither<DomainError, unknown> =>
      subscribed.length === 0
        ? TE.right(undefined)
        : subscribed.length <= MAX_INLINE_FANOUT
          ? createDeliveries(tx, { ids }, subscribed, event, event.createdAt)
          : tx.jobs.enqueue({
              id: ids.next('job'),
              kind: 'webhook.dispatch',
              orgId: event.orgId,
              mode: event.mode,
              payload: { eventId: event.id },
              runAt: event.createdAt,
              dedupeKey: `dispatch:${event.id}`,
              createdAt: event.createdAt,
            }),
    ),
    TE.map(() => undefined),
  );

export const appendEvent = (
  tx: Stores,
  ids: IdGenerator,
  r: SignatureRequest,
  type: EventType,
  at: string,
  data: Record<string, unknown>,
  id: string = ids.next('evt'),
): TE.TaskEither<DomainError, void> =>
  recordEvent(tx, ids, { id, orgId: r.orgId, mode: r.mode, type, createdAt: at, redeliveryOf: null, data: { request_id: r.id, ...data } });

export const appendEvidence = (
  tx: Stores,
  ids: IdGenerator,
  r: SignatureRequest,
  action: EvidenceAction,
  at: string,
  recipientId: string | null,
  client: ClientInfo | null,
  details: Record<string, string> = {},
): TE.TaskEither<DomainError, void> =>
  tx.evidence.append({
    id: ids.next('evt'),
    orgId: r.orgId,
    mode: r.mode,
    requestId: r.id,
    recipientId,
    action,
    at,
    ip: client?.ip ?? null,
    userAgent: client?.userAgent ?? null,
    details,
  });

/**
 * Enqueues a job about request `r` (its org and mode) in the caller's transaction. Named arguments: `runAt`
 * and `createdAt` are both times, and a swap would run the job at the wrong moment without any error.
 */
export const enqueueJob = (
  tx: Stores,
  ids: IdGenerator,
  r: SignatureRequest,
  job: JobWork & { readonly runAt: string; readonly createdAt: string; readonly dedupeKey: string | null },
): TE.TaskEither<DomainError, void> =>
  pipe(
    // Object.assign: on Node 20 a literal that spreads `job` and then adds keys it lacks takes V8's slow path.
    tx.jobs.enqueue(Object.assign({}, job, { id: ids.next('job'), orgId: r.orgId, mode: r.mode })),
    TE.map(() => undefined),
  );

/** Invitations for the signers whose turn it is (all of them when parallel), one per signer ever. */
export const inviteDueSigners = (
  tx: Stores,
  ids: IdGenerator,
  r: SignatureRequest,
  due: ReadonlyArray<{ readonly id: string; readonly status: string }>,
  at: string,
): TE.TaskEither<DomainError, void> =>
  pipe(
    due.filter((s) => s.status === 'PENDING'),
    TE.traverseSeqArray((s) =>
      enqueueJob(tx, ids, r, { kind: 'mail.invite', payload: { requestId: r.id, recipientId: s.id }, runAt: at, createdAt: at, dedupeKey: `invite:${s.id}` }),
    ),
    TE.map(() => undefined),
  );
