import type { DomainEvent, EventOutbox } from '@esig/core';
import { EVENT_TYPES, concurrentModification } from '@esig/core';
import * as E from 'fp-ts/Either';
import { pipe } from 'fp-ts/function';
import * as TE from 'fp-ts/TaskEither';
import * as t from 'io-ts';
import type { Conn } from './connection';
import { attempt } from './connection';
import { JsonText, ModeC, Timestamp, decode, nullable, oneOf, rowName } from './decode';
import type { KeysetTable } from './keyset';
import { listKeyset } from './keyset';

const EventRow = t.type({
  id: t.string,
  org_id: t.string,
  mode: ModeC,
  type: oneOf(EVENT_TYPES, 'EventType'),
  created_at: Timestamp,
  data: JsonText(t.UnknownRecord),
  redelivery_of: nullable(t.string),
});

const COLUMNS = 'id, org_id, mode, type, created_at, data, redelivery_of';
const TABLE: KeysetTable = { table: 'events', columns: COLUMNS, filterColumn: 'type' };

const toEvent = (r: t.TypeOf<typeof EventRow>): DomainEvent => ({
  id: r.id,
  orgId: r.org_id,
  mode: r.mode,
  type: r.type,
  createdAt: r.created_at,
  data: r.data,
  redeliveryOf: r.redelivery_of,
});

const decodeRow = (row: unknown) => pipe(decode(EventRow, rowName('events', row))(row), E.map(toEvent));

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
