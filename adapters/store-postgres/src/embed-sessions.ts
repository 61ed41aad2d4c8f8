import type { EmbedSessionStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { EMBED_SESSION_COLUMNS, embedSessionRow, toEmbedSession } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';

const decodeRow = rowDecoder(embedSessionRow(columnCodecs), 'embed_sessions', toEmbedSession, 'id');

const NewSession = rowType({
  id: t.string,
  tokenHash: t.string,
  orgId: t.string,
  mode: ModeC,
  requestId: t.string,
  recipientId: t.string,
  origin: t.string,
  createdAt: Timestamp,
  expiresAt: Timestamp,
  usedAt: nullable(Timestamp),
});

/**
 * The EmbedSessionStore. The lookup is by token hash across tenants (the token is the credential);
 * `consume` is one conditional UPDATE, so of concurrent first loads exactly one wins.
 */
export const pgEmbedSessions = (conn: Conn): EmbedSessionStore => ({
  insert: (s) => {
    const taken = () => concurrentModification('embedded_session', s.id);
    return pipe(
      TE.fromEither(decode(NewSession, `new embed_sessions row ${s.id}`)(s)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `INSERT INTO embed_sessions (${EMBED_SESSION_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING`,
          [s.id, s.tokenHash, s.orgId, s.mode, s.requestId, s.recipientId, s.origin, s.createdAt, s.expiresAt, s.usedAt],
          taken,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
    );
  },

  findByTokenHash: (tokenHash) =>
    pipe(
      run(conn, 'read', `SELECT ${EMBED_SESSION_COLUMNS} FROM embed_sessions WHERE token_hash = $1`, [tokenHash]),
      TE.chainEitherK(({ rows: [row] }) => (row === undefined ? E.right(null) : decodeRow(row))),
    ),

  consume: (tokenHash, at) =>
    pipe(
      run(conn, 'write', 'UPDATE embed_sessions SET used_at = $2 WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2', [tokenHash, at]),
      TE.map((r) => r.rowCount === 1),
    ),
});
