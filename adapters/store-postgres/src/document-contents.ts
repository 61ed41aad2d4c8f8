import type { DocumentContentStore } from '@esig/core';
import { writingWhole } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { contentKeyName } from '@esig/store-sql';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { Bytes, decode, rowType } from './decode.js';

const ContentRow = rowType({ bytes: Bytes });

/**
 * PDF bytes as bytea, keyed by (org_id, mode, document_id) where document_id is `contentKeyName(key)`. `put` overwrites: storing the same document's
 * bytes twice keeps the last. Bytes are copied on the way in and out, so neither side can alter what the
 * other holds. Written whole, in the transaction that names them (`writingWhole`): the driver sends them over
 * the socket without holding the event loop, and PostgreSQL writes them in its own processes.
 */
export const pgDocumentContents = (conn: Conn): DocumentContentStore =>
  writingWhole({
  put: (tenant, key, bytes) =>
    pipe(
      run(
        conn,
        'write',
        `INSERT INTO document_contents (org_id, mode, document_id, bytes) VALUES ($1, $2, $3, $4)
         ON CONFLICT (org_id, mode, document_id) DO UPDATE SET bytes = excluded.bytes`,
        // A copy: the driver serializes a statement only when its connection gets to it, and the caller
        // may reuse its buffer meanwhile.
        [tenant.orgId, tenant.mode, contentKeyName(key), Buffer.from(bytes)],
      ),
      TE.map(() => undefined),
    ),

  get: (tenant, key) =>
    pipe(
      run(conn, 'read', 'SELECT bytes FROM document_contents WHERE org_id = $1 AND mode = $2 AND document_id = $3', [
        tenant.orgId,
        tenant.mode,
        contentKeyName(key),
      ]),
      TE.chainEitherK(({ rows: [row] }) =>
        row === undefined
          ? E.right(null)
          : pipe(
              decode(ContentRow, `document_contents row ${contentKeyName(key)}`)(row),
              E.map((r) => r.bytes),
            ),
      ),
    ),
  });
