import type { WebhookEndpoint, WebhookEndpointStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { endpointRow, ownSecretFields, toEndpoint } from '@esig/store-sql';
import * as A from 'fp-ts/lib/Array.js';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Timestamp, columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const EndpointRow = endpointRow(columnCodecs);

/** The endpoint's columns, in the order its statements list them (webhook-deliveries.ts joins them too). */
export const ENDPOINT_COLUMNS =
  'id, org_id, mode, url, events, description, enabled, disabled_reason, disabled_at, secrets, consecutive_final_failures, failing_since, created_at, updated_at, version';
const TABLE: KeysetTable = { table: 'webhook_endpoints', columns: ENDPOINT_COLUMNS };

export const decodeEndpoint = rowDecoder(EndpointRow, 'webhook_endpoints', toEndpoint);

/** The row written for an endpoint, checked with the codec that reads it back. */
const toRow = (e: WebhookEndpoint) => {
  const row = {
    id: e.id,
    org_id: e.orgId,
    mode: e.mode,
    url: e.url,
    events: JSON.stringify(e.events),
    description: e.description,
    enabled: e.enabled ? 1 : 0,
    disabled_reason: e.disabledReason,
    disabled_at: e.disabledAt,
    secrets: JSON.stringify(e.secrets.map(ownSecretFields)),
    consecutive_final_failures: e.consecutiveFinalFailures,
    failing_since: e.failingSince,
    created_at: e.createdAt,
    updated_at: e.updatedAt,
    version: e.version,
  };
  return pipe(
    decode(EndpointRow, `new webhook_endpoints row ${e.id}`)(row),
    E.map(() => row),
  );
};

/**
 * The enabled endpoints of a tenant subscribed to a type (org, mode, type), oldest first: the tenant's
 * range of the page index, in its order, with the JSON test on those rows only.
 */
export const FIND_SUBSCRIBED_SQL = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints
  WHERE org_id = ? AND mode = ? AND enabled = 1 AND EXISTS (SELECT 1 FROM json_each(webhook_endpoints.events) WHERE value = ?)
  ORDER BY created_at, id`;

const SELECT_BY_ID = `SELECT ${ENDPOINT_COLUMNS} FROM webhook_endpoints WHERE id = ? AND org_id = ? AND mode = ?`;

/**
 * The WebhookEndpointStore. `findByIdForUpdate` is a plain read: SQLite transactions run one at a time
 * (BEGIN IMMEDIATE on the one write connection), so the row cannot change before the transaction ends.
 */
export const sqliteWebhookEndpoints = (conn: Conn): WebhookEndpointStore => {
  const findById: WebhookEndpointStore['findById'] = (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(SELECT_BY_ID).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeEndpoint(row))),
    );
  return {
    insert: (endpoint) =>
      pipe(
        TE.fromEither(toRow(endpoint)),
        TE.chain((row) =>
          attempt(
            conn,
            (c) =>
              c
                .prepare(
                  `INSERT INTO webhook_endpoints (${ENDPOINT_COLUMNS}) VALUES (@id, @org_id, @mode, @url, @events, @description, @enabled, @disabled_reason,
                   @disabled_at, @secrets, @consecutive_final_failures, @failing_since, @created_at, @updated_at, @version)`,
                )
                .run(row),
            () => concurrentModification('webhook_endpoint', endpoint.id),
          ),
        ),
        TE.map(() => undefined),
      ),

    findById,
    findByIdForUpdate: findById,

    list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, undefined, decodeEndpoint),

    update: (next) =>
      pipe(
        TE.fromEither(toRow(next)),
        TE.chain((row) =>
          attempt(conn, (c) =>
            // The version check and the write are one statement. created_at is the keyset position and
            // never changes, so it is not written.
            c
              .prepare(
                `UPDATE webhook_endpoints SET url = @url, events = @events, description = @description, enabled = @enabled,
                   disabled_reason = @disabled_reason, disabled_at = @disabled_at, secrets = @secrets,
                   consecutive_final_failures = @consecutive_final_failures, failing_since = @failing_since, updated_at = @updated_at,
                   version = @version
                 WHERE id = @id AND org_id = @org_id AND mode = @mode AND version = @version - 1`,
              )
              .run(row),
          ),
        ),
        TE.chain((r) => (r.changes === 1 ? TE.right(undefined) : TE.left(concurrentModification('webhook_endpoint', next.id)))),
      ),

    clearFailures: (tenant, id, at) =>
      pipe(
        TE.fromEither(decode(Timestamp, 'the time failures are cleared')(at)),
        TE.chain(() =>
          attempt(conn, (c) =>
            c
              .prepare(
                `UPDATE webhook_endpoints SET consecutive_final_failures = 0, failing_since = NULL, updated_at = ?, version = version + 1
                 WHERE id = ? AND org_id = ? AND mode = ? AND (consecutive_final_failures <> 0 OR failing_since IS NOT NULL)`,
              )
              .run(at, id, tenant.orgId, tenant.mode),
          ),
        ),
        TE.map(() => undefined),
      ),

    delete: (tenant, id) =>
      pipe(
        attempt(conn, (c) => c.prepare('DELETE FROM webhook_endpoints WHERE id = ? AND org_id = ? AND mode = ?').run(id, tenant.orgId, tenant.mode)),
        TE.map((r) => r.changes === 1),
      ),

    findSubscribed: (tenant, type) =>
      pipe(
        attempt(conn, (c) =>
          c
            .prepare(FIND_SUBSCRIBED_SQL)
            .all(tenant.orgId, tenant.mode, type),
        ),
        TE.chainEitherK(A.traverse(E.Applicative)(decodeEndpoint)),
      ),
  };
};
