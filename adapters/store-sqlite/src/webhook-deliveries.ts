import type { WebhookDelivery, WebhookDeliveryStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { attemptFilters, attemptRow, decodeJoined, deliveryRow, prefixedColumns, qualifiedColumns, toAttempt, toDelivery } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { flow, pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Timestamp, columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeysetBy } from './keyset.js';
import { ENDPOINT_COLUMNS, decodeEndpoint } from './webhook-endpoints.js';

const DeliveryRow = deliveryRow(columnCodecs);

const DELIVERY_COLUMNS =
  'id, org_id, mode, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, last_attempt_at, last_outcome, created_at, version';

const decodeDelivery = rowDecoder(DeliveryRow, 'webhook_deliveries', toDelivery);

/** A delivery and its endpoint of the same tenant: one statement, where findById on each would be two. */
export const FIND_WITH_ENDPOINT_SQL = `SELECT ${qualifiedColumns(DELIVERY_COLUMNS, 'd')}, ${prefixedColumns(ENDPOINT_COLUMNS, 'e')}
  FROM webhook_deliveries d LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.org_id = d.org_id AND e.mode = d.mode
  WHERE d.id = ? AND d.org_id = ? AND d.mode = ?`;

const decodeWithEndpoint = flow(
  decodeJoined(decodeDelivery, 'e', decodeEndpoint),
  E.map(([delivery, endpoint]) => ({ delivery, endpoint })),
);

const toDeliveryRow = (d: WebhookDelivery) => {
  const row = {
    id: d.id,
    org_id: d.orgId,
    mode: d.mode,
    endpoint_id: d.endpointId,
    event_id: d.eventId,
    event_type: d.eventType,
    body: d.body,
    status: d.status,
    attempts: d.attempts,
    next_attempt_at: d.nextAttemptAt,
    last_attempt_at: d.lastAttemptAt,
    last_outcome: d.lastOutcome,
    created_at: d.createdAt,
    version: d.version,
  };
  return pipe(
    decode(DeliveryRow, `new webhook_deliveries row ${d.id}`)(row),
    E.map(() => row),
  );
};

const AttemptRow = attemptRow(columnCodecs);

const ATTEMPT_COLUMNS = 'id, org_id, mode, delivery_id, endpoint_id, event_id, event_type, attempt, outcome, succeeded, duration_ms, response_body, created_at';
const ATTEMPTS: KeysetTable = { table: 'webhook_attempts', columns: ATTEMPT_COLUMNS };

const decodeAttempt = rowDecoder(AttemptRow, 'webhook_attempts', toAttempt);

/**
 * Cancels an endpoint's waiting deliveries (time, org, mode, endpoint) through the index of pending ones.
 * The version moves on, so a worker that read a delivery as pending loses its update.
 */
export const CANCEL_PENDING_SQL = `UPDATE webhook_deliveries
  SET status = 'cancelled', next_attempt_at = NULL, last_attempt_at = COALESCE(last_attempt_at, ?), version = version + 1
  WHERE org_id = ? AND mode = ? AND endpoint_id = ? AND status = 'pending'`;

/**
 * The WebhookDeliveryStore. A delivery's update writes its state only: what was fixed at creation (the
 * endpoint, the event, the body, created_at) is never rewritten. The attempt log is append-only.
 */
export const sqliteWebhookDeliveries = (conn: Conn): WebhookDeliveryStore => ({
  insert: (delivery) =>
    pipe(
      TE.fromEither(toDeliveryRow(delivery)),
      TE.chain((row) =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES (@id, @org_id, @mode, @endpoint_id, @event_id, @event_type, @body,
                 @status, @attempts, @next_attempt_at, @last_attempt_at, @last_outcome, @created_at, @version)`,
              )
              .run(row),
          () => concurrentModification('webhook_delivery', delivery.id),
        ),
      ),
      TE.map(() => undefined),
    ),

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) =>
        c.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode),
      ),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeDelivery(row))),
    ),

  findWithEndpoint: (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(FIND_WITH_ENDPOINT_SQL).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeWithEndpoint(row))),
    ),

  update: (next) =>
    pipe(
      TE.fromEither(toDeliveryRow(next)),
      TE.chain((row) =>
        attempt(conn, (c) =>
          c
            .prepare(
              `UPDATE webhook_deliveries SET status = @status, attempts = @attempts, next_attempt_at = @next_attempt_at,
                 last_attempt_at = @last_attempt_at, last_outcome = @last_outcome, version = @version
               WHERE id = @id AND org_id = @org_id AND mode = @mode AND version = @version - 1`,
            )
            .run(row),
        ),
      ),
      TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('webhook_delivery', next.id)))),
    ),

  cancelPending: (tenant, endpointId, at) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'cancellation time')(at)),
      TE.chain(() => attempt(conn, (c) => c.prepare(CANCEL_PENDING_SQL).run(at, tenant.orgId, tenant.mode, endpointId))),
      TE.map((r) => r.changes),
    ),

  appendAttempt: (a) => {
    const row = {
      id: a.id,
      org_id: a.orgId,
      mode: a.mode,
      delivery_id: a.deliveryId,
      endpoint_id: a.endpointId,
      event_id: a.eventId,
      event_type: a.eventType,
      attempt: a.attempt,
      outcome: a.outcome,
      succeeded: a.succeeded ? 1 : 0,
      duration_ms: a.durationMs,
      response_body: a.responseBody,
      created_at: a.createdAt,
    };
    return pipe(
      TE.fromEither(decode(AttemptRow, `new webhook_attempts row ${a.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS}) VALUES (@id, @org_id, @mode, @delivery_id, @endpoint_id, @event_id, @event_type,
                 @attempt, @outcome, @succeeded, @duration_ms, @response_body, @created_at)`,
              )
              .run(row),
          () => concurrentModification('webhook_attempt', a.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findAttempt: (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${ATTEMPT_COLUMNS} FROM webhook_attempts WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeAttempt(row))),
    ),
  listAttempts: (tenant, query) => listKeysetBy(conn, ATTEMPTS, tenant, query, attemptFilters(query.filter), decodeAttempt),
});
