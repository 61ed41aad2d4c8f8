import type { Org, OrgStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Timestamp, decode, rowName, rowType } from './decode.js';

const OrgRow = rowType({ id: t.string, name: t.string, created_at: Timestamp });

const toOrg = (r: t.TypeOf<typeof OrgRow>): Org => ({ id: r.id, name: r.name, createdAt: r.created_at });

/** The OrgStore. Orgs are the tenants themselves, so nothing here is filtered by tenant. */
export const sqliteOrgs = (conn: Conn): OrgStore => ({
  insert: (org) => {
    const row = { id: org.id, name: org.name, created_at: org.createdAt };
    return pipe(
      TE.fromEither(decode(OrgRow, `new orgs row ${org.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) => c.prepare('INSERT INTO orgs (id, name, created_at) VALUES (@id, @name, @created_at)').run(row),
          // A taken name means a concurrent bootstrap created the org first.
          () => concurrentModification('org', org.name),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findByName: (name) =>
    pipe(
      attempt(conn, (c) => c.prepare('SELECT id, name, created_at FROM orgs WHERE name = ?').get(name)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : pipe(decode(OrgRow, rowName('orgs', row))(row), E.map(toOrg)))),
    ),
});
