import type { EmbedSessionStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { EMBED_SESSION_COLUMNS, embedSessionRow, toEmbedSession } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode } from './decode.js';

const SessionRow = embedSessionRow(columnCodecs);

/**
 * The EmbedSessionStore. The lookup is by token hash across tenants (the token is the credential); decode
 * errors name the session id, never the hash. `consume` is one conditional UPDATE, so only one load wins.
 */
export const sqliteEmbedSessions = (conn: Conn): EmbedSessionStore => ({
  insert: (s) => {
    const row = {
      id: s.id,
      token_hash: s.tokenHash,
      org_id: s.orgId,
      mode: s.mode,
      request_id: s.requestId,
      recipient_id: s.recipientId,
      origin: s.origin,
      created_at: s.createdAt,
      expires_at: s.expiresAt,
      used_at: s.usedAt,
    };
    return pipe(
      TE.fromEither(decode(SessionRow, `new embed_sessions row ${s.id}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(
                `INSERT INTO embed_sessions (${EMBED_SESSION_COLUMNS}) VALUES (@id, @token_hash, @org_id, @mode, @request_id, @recipient_id, @origin, @created_at, @expires_at, @used_at)`,
              )
              .run(row),
          () => concurrentModification('embedded_session', s.id),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findByTokenHash: (tokenHash) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${EMBED_SESSION_COLUMNS} FROM embed_sessions WHERE token_hash = ?`).get(tokenHash)),
      TE.chainEitherK((row) => (row === undefined ? E.right(null) : pipe(decode(SessionRow, `embed_sessions row ${idOf(row)}`)(row), E.map(toEmbedSession)))),
    ),

  consume: (tokenHash, at) =>
    attempt(
      conn,
      (c) => c.prepare('UPDATE embed_sessions SET used_at = ? WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?').run(at, tokenHash, at).changes === 1,
    ),
});

const idOf = (row: unknown): string => (typeof row === 'object' && row !== null && 'id' in row && typeof row.id === 'string' ? row.id : 'unknown');
