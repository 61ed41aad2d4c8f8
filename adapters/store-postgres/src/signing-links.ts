import type { SigningLinkStore } from '@esig/core';
import { concurrentModification } from '@esig/core';
import { signingLinkRow, toSigningLink } from '@esig/store-sql';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { ModeC, Timestamp, columnCodecs, decode, nullable, rowDecoder, rowType } from './decode.js';

const LinkRow = signingLinkRow(columnCodecs);
const decodeRow = rowDecoder(LinkRow, 'signing_links', toSigningLink, 'recipient_id');

const NewLink = rowType({
  tokenHash: t.string,
  orgId: t.string,
  mode: ModeC,
  requestId: t.string,
  recipientId: t.string,
  createdAt: Timestamp,
  expiresAt: nullable(Timestamp),
});

const COLUMNS = 'token_hash, org_id, mode, request_id, recipient_id, created_at, expires_at';

/** The SigningLinkStore. The lookup is by token hash alone, across tenants: the token is the credential. */
export const pgSigningLinks = (conn: Conn): SigningLinkStore => ({
  insert: (link) => {
    // Two links with one token hash would mean two recipients behind one token; the first one stays.
    const taken = () => concurrentModification('signing_link', link.requestId);
    return pipe(
      TE.fromEither(decode(NewLink, `new signing_links row for ${link.recipientId}`)(link)),
      TE.chain(() =>
        run(
          conn,
          'write',
          `INSERT INTO signing_links (${COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
          [link.tokenHash, link.orgId, link.mode, link.requestId, link.recipientId, link.createdAt, link.expiresAt],
          taken,
        ),
      ),
      TE.chain((r) => (r.rowCount === 1 ? TE.right(undefined) : TE.left(taken()))),
    );
  },

  findByTokenHash: (tokenHash) =>
    pipe(
      run(conn, 'read', `SELECT ${COLUMNS} FROM signing_links WHERE token_hash = $1`, [tokenHash]),
      TE.chainEitherK(({ rows: [row] }) =>
        // Named by recipient, not token hash: decode errors end up in logs.
        row === undefined ? E.right(null) : decodeRow(row),
      ),
    ),
});
