import type { WebhookEndpoint, WebhookEndpointStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { EventTypesC, SecretsC, endpointRow, ownSecretFields, toEndpoint } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Access, Conn } from './connection.js';
import { plannedPerCall, run, writeAny } from './connection.js';
import { Int, ModeC, Timestamp, columnCodecs, decode, decodeAll, nullable, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const EndpointRow = endpointRow(columnCodecs);

/** What `insert` and `update` accept: the port's type, checked so that it reads back the same. */
const NewEndpoint = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  url: t.string,
  events: EventTypesC,
  description: nullable(t.string),
  enabled: t.boolean,
  disabledReason: nullable(t.string),
  disabledAt: nullable(Timestamp),
  secrets: SecretsC,
  consecutiveFinalFailures: Int,
  failingSince: nullable(Timestamp),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  version: Int,
});

/** The endpoint's columns, in the order its statements list them (webhook-deliveries.ts joins them too). */
export const ENDPOINT_COLUMNS =
  'id, org_id, mode, url, events, description, enabled, disabled_reason, disabled_at, secrets, consecutive_final_failures, failing_since, created_at, updated_at, version';
const TABLE: KeysetTable = { table: 'webhook_endpoints', columns: ENDPOINT_COLUMNS };

export const decodeEndpoint = rowDecoder(EndpointRow, 'webhook_endpoints', toEndpoint);

const secretsJson = (e: WebhookEndpoint) => JSON.stringify(e.secrets.map(ownSecretFields));

/**
 * The enabled endpoints of a tenant subscribed to a type ($3), oldest first: the tenant's range of the
 * page index, in its order, with the jsonb test on those rows only.
 */
export const FIND_SUBSCRIBED_SQL = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
  WHERE org_id = $1 AND mode = $2 AND enabled AND events ? $3
  ORDER BY created_at, id`;

/**
 * Resets an endpoint's run of failures; a healthy endpoint's row does not match (see `clearFailures`). Planned at
 * every call: the marker sits in a subquery with no FROM, where its cost counts on every generic plan; the tenant is
 * compared with `IS NOT DISTINCT FROM` (for these NOT NULL columns, `=`), which no index can serve, so that the
 * planner, on a table grown without ANALYZE, cannot take the tenant's range of the page index. With the marker in
 * the WHERE, PostgreSQL kept generic plans made while the table held a row or none, which read the tenant's range of
 * the page index, or walked the whole of it (it holds `id` as its last column): 189 pages for one endpoint among
 * 20,000 (the plan cache test counts pages).
 */
export const CLEAR_FAILURES = plannedPerCall(
  'webhook_endpoints_clear_failures',
  4,
  (m) => `UPDATE webhook_endpoints SET consecutive_final_failures = 0, failing_since = NULL, updated_at = $1, version = version + 1
  WHERE id = (SELECT $2::text WHERE ${m}) AND (org_id, mode) IS NOT DISTINCT FROM ($3::text, $4::text)
    AND (consecutive_final_failures <> 0 OR failing_since IS NOT NULL)`,
);

/**
 * The WebhookEndpointStore. `findByIdForUpdate` is SELECT … FOR UPDATE: inside a transaction it holds
 * the row until the end, and a second transaction asking for it waits, then (READ COMMITTED) reads the
 * row as the first one committed it. On the pool it is refused inside a running transaction like a
 * write, since it would wait for a lock that transaction may hold.
 */
export const pgWebhookEndpoints = (conn: Conn): WebhookEndpointStore => {
  const find =
    (access: Access, lock: string): WebhookEndpointStore['findById'] =>
    (tenant, id) =>
      pipe(
        run(conn, access, `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = $1 AND org_id = $2 AND mode = $3${lock}`, [id, tenant.orgId, tenant.mode]),
        TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeEndpoint(row))),
      );
  return {
    insert: (endpoint) => {
      const taken = () => concurrentModification('webhook_endpoint', endpoint.id);
      return pipe(
        TE.fromEither(decode(NewEndpoint, `new webhook_endpoints row ${endpoint.id}`)(endpoint)),
        TE.chain((e) =>
          run(
            conn,
            'write',
            `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS})
             VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7, $8, $9, $10::jsonb, $11, $12, $13, $14, $15) ON CONFLICT DO NOTHING`,
            [
              e.id,
              e.orgId,
              e.mode,
              e.url,
              JSON.stringify(e.events),
              e.description,
              e.enabled,
              e.disabledReason,
              e.disabledAt,
              secretsJson(e),
              e.consecutiveFinalFailures,
              e.failingSince,
              e.createdAt,
              e.updatedAt,
              e.version,
            ],
            taken,
          ),
        ),
        TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
      );
    },

    findById: find('read', ''),
    findByIdForUpdate: find('write', ' FOR UPDATE'),

    list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, undefined, decodeEndpoint),

    update: (next) => {
      const stale = () => concurrentModification('webhook_endpoint', next.id);
      return pipe(
        TE.fromEither(decode(NewEndpoint, `new webhook_endpoints row ${next.id}`)(next)),
        // The version check and the write are one statement; a concurrent writer holding the row makes
        // this wait for its end, and READ COMMITTED then re-checks the version on the row it committed.
        // created_at is the keyset position and never changes, so it is not written.
        TE.chain((e) =>
          run(
            conn,
            'write',
            `UPDATE webhook_endpoints SET url = $1, events = $2::jsonb, description = $3, enabled = $4, disabled_reason = $5, disabled_at = $6,
               secrets = $7::jsonb, consecutive_final_failures = $8, failing_since = $9, updated_at = $10, version = $11
             WHERE id = $12 AND org_id = $13 AND mode = $14 AND version = $11 - 1`,
            [
              e.url,
              JSON.stringify(e.events),
              e.description,
              e.enabled,
              e.disabledReason,
              e.disabledAt,
              secretsJson(e),
              e.consecutiveFinalFailures,
              e.failingSince,
              e.updatedAt,
              e.version,
              e.id,
              e.orgId,
              e.mode,
            ],
            stale,
          ),
        ),
        TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(stale()))),
      );
    },

    // A healthy endpoint's row does not match, so it is neither written nor locked: concurrent successful
    // deliveries to one endpoint do not queue on its row. READ COMMITTED takes the statement's own snapshot, so
    // a failure committed before it is seen and reset; a failing row another transaction is writing is waited
    // for and re-checked as committed.
    clearFailures: (tenant, id, at) =>
      pipe(
        TE.fromEither(decode(Timestamp, 'the time failures are cleared')(at)),
        TE.chain(() => writeAny(conn, CLEAR_FAILURES, [at, id, tenant.orgId, tenant.mode])),
      ),

    delete: (tenant, id) =>
      pipe(
        run(conn, 'write', 'DELETE FROM webhook_endpoints WHERE id = $1 AND org_id = $2 AND mode = $3', [id, tenant.orgId, tenant.mode]),
        TE.map((r) => r.rowCount === 1),
      ),

    findSubscribed: (tenant, type) =>
      pipe(
        run(conn, 'read', FIND_SUBSCRIBED_SQL, [tenant.orgId, tenant.mode, type]),
        TE.chainEitherK((r) => decodeAll(decodeEndpoint)(r.rows)),
      ),
  };
};
