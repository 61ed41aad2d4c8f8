import type { SigningLinkStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { signingLinkRow, toSigningLink } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { columnCodecs, decode } from './decode.js';

const SigningLinkRow = signingLinkRow(columnCodecs);

const COLUMNS = 'token_hash, org_id, mode, request_id, recipient_id, created_at, expires_at';

/**
 * The SigningLinkStore. `findByTokenHash` is deliberately not filtered by tenant: the token is the
 * credential, and the link names the tenant. Decode errors name the recipient, never the hash.
 */
export const sqliteSigningLinks = (conn: Conn): SigningLinkStore => ({
  insert: (link) => {
    const row = {
      token_hash: link.tokenHash,
      org_id: link.orgId,
      mode: link.mode,
      request_id: link.requestId,
      recipient_id: link.recipientId,
      created_at: link.createdAt,
      expires_at: link.expiresAt,
    };
    return pipe(
      TE.fromEither(decode(SigningLinkRow, `new signing_links row for ${link.recipientId}`)(row)),
      TE.chain(() =>
        attempt(
          conn,
          (c) =>
            c
              .prepare(`INSERT INTO signing_links (${COLUMNS}) VALUES (@token_hash, @org_id, @mode, @request_id, @recipient_id, @created_at, @expires_at)`)
              .run(row),
          () => concurrentModification('signing_link', link.recipientId),
        ),
      ),
      TE.map(() => undefined),
    );
  },

  findByTokenHash: (tokenHash) =>
    pipe(
      attempt(conn, (c) => c.prepare(`SELECT ${COLUMNS} FROM signing_links WHERE token_hash = ?`).get(tokenHash)),
      TE.chainEitherK((row) =>
        row === undefined
          ? E.right(null)
          : pipe(
              decode(SigningLinkRow, `signing_links row for ${recipientOf(row)}`)(row),
              E.map(toSigningLink),
            ),
      ),
    ),
});

const recipientOf = (row: unknown): string =>
  typeof row === 'object' && row !== null && 'recipient_id' in row && typeof row.recipient_id === 'string' ? row.recipient_id : 'unknown recipient';
