import type { EventOutbox } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { eventRow, toEvent } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode, rowDecoder } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const EventRow = eventRow(columnCodecs);

const COLUMNS = 'id, org_id, mode, type, created_at, data, redelivery_of';
const TABLE: KeysetTable = { table: 'events', columns: COLUMNS, filterColumn: 'type' };

const decodeRow = rowDecoder(EventRow, 'events', toEvent);

/**
 * The EventOutbox. New events have `dispatched_at` NULL, which puts them in the webhook dispatcher's
 * queue; the dispatcher is the only writer of that column.
 */
export const sqliteEvents = (conn: Conn): EventOutbox => ({
  append: (event) => {
    const row = {
      id: event.id,
      org_id: event.orgId,
      mode: event.mode,
      type: event.type,
      created_at: event.createdAt,
      data: JSON.stringify(event.data),
      redelivery_of: event.redeliveryOf,
    };
    return pipe(
      TE.fromEither(decode(EventRow, `new events row ${event.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO events (${COLUMNS}) VALUES (@id, @org_id, @mode, @type, @created_at, @data, @redelivery_of)`)
              .run(row),
          // The id exists: the event was already recorded (e.g. `request.completed:<id>` by a concurrent
          // completion). The statement failed alone; the first event stays as it was.
          () => concurrentModification('event', event.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.type, decodeRow),

  findById: (tenant, id) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM events WHERE id = ? AND org_id = ? AND mode = ?`).get(id, tenant.orgId, tenant.mode)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),
});
