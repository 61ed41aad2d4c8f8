import type { Org, OrgStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { Timestamp, TimestampColumn, decode, rowName, rowType } from './decode.js';

const OrgRow = rowType({ id: t.string, name: t.string, created_at: TimestampColumn });
const NewOrg = rowType({ id: t.string, name: t.string, createdAt: Timestamp });

const toOrg = (r: t.TypeOf<typeof OrgRow>): Org => ({ id: r.id, name: r.name, createdAt: r.created_at });

/** The OrgStore. Orgs are the tenants themselves, so nothing here is filtered by tenant. */
export const pgOrgs = (conn: Conn): OrgStore => ({
  insert: (org) => {
    const taken = () => concurrentModification('org', org.name);
    return pipe(
      TE.fromEither(decode(NewOrg, `new orgs row ${org.id}`)(org)),
      // DO NOTHING rather than an error, so a transaction that goes on after the conflict stays usable.
      TE.chain(() => run(conn, 'write', 'INSERT INTO orgs (id, name, created_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING', [org.id, org.name, org.createdAt], taken)),
      // A taken name (or id) means a concurrent bootstrap created the org first.
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
    );
  },

  findByName: (name) =>
    pipe(
      run(conn, 'read', 'SELECT id, name, created_at FROM orgs WHERE name = $1', [name]),
      TE.chainEitherK(({ rows: [row] }) =>
        row === undefined ? E.right(null) : pipe(decode(OrgRow, rowName('orgs', row))(row), E.map(toOrg)),
      ),
    ),
});
