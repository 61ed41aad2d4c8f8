import type { EventOutbox } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { EventTypeC, eventRow, toEvent } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { byIdSql } from './by-id.js';
import { insertOne, run, writeOne } from './connection.js';
import { ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';
import type { KeysetTable } from './keyset.js';
import { listKeyset } from './keyset.js';

const EventRow = eventRow(columnCodecs);

const NewEvent = rowType({
  id: t.string,
  orgId: t.string,
  mode: ModeC,
  type: EventTypeC,
  createdAt: Timestamp,
  data: t.UnknownRecord,
  redeliveryOf: nullable(t.string),
});

const COLUMNS = 'id, org_id, mode, type, created_at, data, redelivery_of';
const TABLE: KeysetTable = { table: 'events', columns: COLUMNS, filterColumn: 'type' };

const decodeRow = rowDecoder(EventRow, 'events', toEvent);

/**
 * The EventOutbox. New events have `dispatched_at` NULL, which puts them in the webhook dispatcher's
 * queue; the dispatcher is the only writer of that column.
 */
const INSERT = insertOne(`INSERT INTO events (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7)`);

export const pgEvents = (conn: Conn): EventOutbox => ({
  append: (event) => {
    // The id exists: the event was already recorded (e.g. `request.completed:<id>` by a concurrent
    // completion). DO NOTHING leaves the first event as it was and the transaction usable.
    const exists = () => concurrentModification('event', event.id);
    return pipe(
      TE.fromEither(decode(NewEvent, `new events row ${event.id}`)(event)),
      TE.chain(() =>
        writeOne(conn, INSERT, [event.id, event.orgId, event.mode, event.type, event.createdAt, JSON.stringify(event.data), event.redeliveryOf], exists),
      ),
    );
  },

  list: (tenant, query) => listKeyset(conn, TABLE, tenant, query, query.filter.type, decodeRow),

  findById: (tenant, id) =>
    pipe(
      run(conn, 'read', byIdSql('events', COLUMNS), [id, tenant.orgId, tenant.mode]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),
});
