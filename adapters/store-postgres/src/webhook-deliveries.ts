import type { Tenant, WebhookDeliveryStore } from '@esig/core';
import { concurrentModification, storeFailure } from '@esig/core';
import { DeliveryStatusC, attemptFilters, attemptRow, decodeJoined, deliveryRow, prefixedColumns, qualifiedColumns, toAttempt, toDelivery } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { flow, pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { changeOnePlannedPerCall, insertOne, plannedPerCall, run, writeOne } from './connection.js';
import { byIdSql } from './by-id.js';
import { turnBatcher } from './turn-batch.js';
import { Int, ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeysetBy } from './keyset.js';
import { ENDPOINT_COLUMNS, decodeEndpoint } from './webhook-endpoints.js';

const DeliveryRow = deliveryRow(columnCodecs);

const NewDelivery = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  endpointId: t.string,
  eventId: t.string,
  eventType: t.string,
  body: t.string,
  status: DeliveryStatusC,
  attempts: Int,
  nextAttemptAt: nullable(Timestamp),
  lastAttemptAt: nullable(Timestamp),
  lastOutcome: nullable(t.string),
  createdAt: Timestamp,
  version: Int,
});

const DELIVERY_COLUMNS =
  'id, org_id, mode, endpoint_id, event_id, event_type, body, status, attempts, next_attempt_at, last_attempt_at, last_outcome, created_at, version';

const decodeDelivery = rowDecoder(DeliveryRow, 'webhook_deliveries', toDelivery);

const decodeWithEndpoint = flow(
  decodeJoined(decodeDelivery, 'e', decodeEndpoint),
  E.map(([delivery, endpoint]) => ({ delivery, endpoint })),
);

/**
 * Deliveries with their endpoints, one round trip where findById on each would be two. The wants are
 * (id, org, mode) triples ($1, $2, $3), one per delivery, each in its own tenant: a want of another tenant's
 * delivery finds nothing, nor does an endpoint of another tenant's join. Each row is found by its id alone, in
 * its primary key, at any table size and with any statistics or none: `OFFSET 0` keeps the tenant's conditions
 * out of the lookup (as the fence of `byIdSql`), which would otherwise leave the planner free to read the
 * tenant's range of a page index instead (plan-growth.test.ts). A row never changes tenant, so checking it
 * after the lookup is as final.
 */
export const FIND_WITH_ENDPOINT_SQL = `SELECT ${qualifiedColumns(DELIVERY_COLUMNS, 'd')}, ${prefixedColumns(ENDPOINT_COLUMNS, 'e')}
  FROM unnest($1::text[], $2::text[], $3::text[]) AS want(id, org_id, mode)
  CROSS JOIN LATERAL (SELECT * FROM webhook_deliveries WHERE id = want.id OFFSET 0) d
  LEFT JOIN LATERAL (SELECT * FROM webhook_endpoints WHERE id = d.endpoint_id OFFSET 0) e ON e.org_id = d.org_id AND e.mode = d.mode
  WHERE d.org_id = want.org_id AND d.mode = want.mode`;
/** FIND_WITH_ENDPOINT_SQL as the store runs it: kept off generic plans that scan (see `plannedPerCall`). */
export const FIND_WITH_ENDPOINT = plannedPerCall('webhook_deliveries_find_with_endpoint', 3, (m) => `${FIND_WITH_ENDPOINT_SQL} AND ${m}`);

type FindWithEndpoint = WebhookDeliveryStore['findWithEndpoint'];

const findWithEndpointAlone =
  (conn: Conn): FindWithEndpoint =>
  (tenant, id) =>
    pipe(
      run(conn, 'read', FIND_WITH_ENDPOINT, [[id], [tenant.orgId], [tenant.mode]]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeWithEndpoint(row))),
    );

const wantKey = (id: unknown, orgId: unknown, mode: unknown) => JSON.stringify([id, orgId, mode]);

/**
 * On the pool: the lookups of one turn of the event loop in one statement (`turnBatcher`). Each delivery
 * attempt starts with this read, and a worker's job loops, set going together by one claim, make theirs
 * together: one round trip and one statement for all of them.
 */
const findWithEndpointTogether = (conn: Conn): FindWithEndpoint => {
  type Want = { readonly tenant: Tenant; readonly id: string };
  type Found = Awaited<ReturnType<ReturnType<FindWithEndpoint>>>;
  const alone = findWithEndpointAlone(conn);
  const lookup = turnBatcher<Want, Found>(async (wants) => {
    const r = await run(conn, 'read', FIND_WITH_ENDPOINT, [wants.map((w) => w.id), wants.map((w) => w.tenant.orgId), wants.map((w) => w.tenant.mode)])();
    // A statement that failed for all is asked again for each alone: one want that breaks it (a value PostgreSQL
    // refuses) must fail its own call only, as it would have alone.
    if (E.isLeft(r)) return wants.length === 1 ? [r] : Promise.all(wants.map((w) => alone(w.tenant, w.id)()));
    const rows = new Map(r.right.rows.map((row: Record<string, unknown>) => [wantKey(row.id, row.org_id, row.mode), row]));
    return wants.map((w) => {
      const row = rows.get(wantKey(w.id, w.tenant.orgId, w.tenant.mode));
      return row === undefined ? E.right(null) : decodeWithEndpoint(row);
    });
  });
  return (tenant, id) => () => lookup({ tenant, id }).catch((e: unknown) => E.left(storeFailure(e)));
};

const AttemptRow = attemptRow(columnCodecs);

const NewAttempt = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  deliveryId: t.string,
  endpointId: t.string,
  eventId: t.string,
  eventType: t.string,
  attempt: Int,
  outcome: t.string,
  succeeded: t.boolean,
  durationMs: Int,
  responseBody: t.string,
  createdAt: Timestamp,
});

const ATTEMPT_COLUMNS = 'id, org_id, mode, delivery_id, endpoint_id, event_id, event_type, attempt, outcome, succeeded, duration_ms, response_body, created_at';
/** The delivery log's page; its filters (endpoint, event) are passed to `listKeysetBy`. */
export const ATTEMPTS: KeysetTable = { table: 'webhook_attempts', columns: ATTEMPT_COLUMNS };

const decodeAttempt = rowDecoder(AttemptRow, 'webhook_attempts', toAttempt);

/**
 * Cancels an endpoint's waiting deliveries: $1 the time, then org, mode, endpoint. The version moves on, so
 * a worker that read a delivery as pending loses its update; a worker holding the row makes this wait,
 * and READ COMMITTED then re-checks the status on the row it committed.
 */
export const CANCEL_PENDING_SQL = `UPDATE webhook_deliveries
  SET status = 'cancelled', next_attempt_at = NULL, last_attempt_at = COALESCE(last_attempt_at, $1::timestamptz), version = version + 1
  WHERE org_id = $2 AND mode = $3 AND endpoint_id = $4 AND status = 'pending'`;

/** A delivery's new state, if it is still at the version before it (see `update`). */
export const UPDATE_DELIVERY = changeOnePlannedPerCall(
  'webhook_deliveries_update',
  9,
  (m) => `UPDATE webhook_deliveries SET status = $1, attempts = $2, next_attempt_at = $3, last_attempt_at = $4, last_outcome = $5, version = $6
   WHERE id = $7 AND org_id = $8 AND mode = $9 AND version = $6 - 1 AND ${m}`,
);

/** One entry of the log by its id, through the primary key alone (see by-id.ts). Parameters: id, org, mode. */
export const FIND_ATTEMPT = plannedPerCall('webhook_attempts_find_by_id', 3, (m) => byIdSql('webhook_attempts', ATTEMPT_COLUMNS, m));

/** An attempt's log entry. */
const INSERT_ATTEMPT = insertOne(`INSERT INTO webhook_attempts (${ATTEMPT_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`, 'webhook_attempts_insert');

/**
 * The WebhookDeliveryStore. A delivery's update writes its state only: what was fixed at creation (the
 * endpoint, the event, the body, created_at) is never rewritten. The attempt log is append-only.
 */
export const pgWebhookDeliveries = (conn: Conn): WebhookDeliveryStore => ({
  insert: (delivery) => {
    const taken = () => concurrentModification('webhook_delivery', delivery.id);
    return pipe(
      TE.fromEither(decode(NewDelivery, `new webhook_deliveries row ${delivery.id}`)(delivery)),
      TE.chain((d) =>
        run(
          conn,
          'write',
          `INSERT INTO webhook_deliveries (${DELIVERY_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14) ON CONFLICT DO NOTHING`,
          [
            d.id,
            d.orgId,
            d.mode,
            d.endpointId,
            d.eventId,
            d.eventType,
            d.body,
            d.status,
            d.attempts,
            d.nextAttemptAt,
            d.lastAttemptAt,
            d.lastOutcome,
            d.createdAt,
            d.version,
          ],
          taken,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
    );
  },

  findById: (tenant, id) =>
    pipe(
      run(conn, 'read', `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE id = $1 AND org_id = $2 AND mode = $3`, [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeDelivery(row))),
    ),

  findWithEndpoint: conn.batchesReads === true ? findWithEndpointTogether(conn) : findWithEndpointAlone(conn),

  update: (next) => {
    const stale = () => concurrentModification('webhook_delivery', next.id);
    return pipe(
      TE.fromEither(decode(NewDelivery, `new webhook_deliveries row ${next.id}`)(next)),
      TE.chain((d) =>
        writeOne(conn, UPDATE_DELIVERY, [d.status, d.attempts, d.nextAttemptAt, d.lastAttemptAt, d.lastOutcome, d.version, d.id, d.orgId, d.mode], stale),
      ),
    );
  },

  cancelPending: (tenant, endpointId, at) =>
    pipe(
      TE.fromEither(decode(Timestamp, 'cancellation time')(at)),
      TE.chain(() => run(conn, 'write', CANCEL_PENDING_SQL, [at, tenant.orgId, tenant.mode, endpointId])),
      TE.map((r) => r.rowCount ?? 0),
    ),

  appendAttempt: (attempt) => {
    const taken = () => concurrentModification('webhook_attempt', attempt.id);
    return pipe(
      TE.fromEither(decode(NewAttempt, `new webhook_attempts row ${attempt.id}`)(attempt)),
      TE.chain((a) =>
        writeOne(
          conn,
          INSERT_ATTEMPT,
          [a.id, a.orgId, a.mode, a.deliveryId, a.endpointId, a.eventId, a.eventType, a.attempt, a.outcome, a.succeeded, a.durationMs, a.responseBody, a.createdAt],
          taken,
        ),
      ),
    );
  },

  findAttempt: (tenant, id) =>
    pipe(
      run(conn, 'read', FIND_ATTEMPT, [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeAttempt(row))),
    ),
  listAttempts: (tenant, query) => listKeysetBy(conn, ATTEMPTS, tenant, query, attemptFilters(query.filter), decodeAttempt),
});
