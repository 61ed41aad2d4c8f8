import type { DocumentContentStore } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { contentKeyName } from '@esig/store-sql';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { Bytes, decode, rowType } from './decode.js';

const ContentRow = rowType({ bytes: Bytes });

/**
 * PDF bytes as BLOBs, keyed by (org_id, mode, document_id) where document_id is `contentKeyName(key)`. `put` overwrites: storing the same document's
 * bytes twice keeps the last. The driver copies the bytes on write and hands out a fresh buffer on read,
 * so neither side can alter what the other holds.
 */
export const sqliteDocumentContents = (conn: Conn): DocumentContentStore => ({
  put: (tenant, key, bytes) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare(
            `INSERT INTO document_contents (org_id, mode, document_id, bytes) VALUES (?, ?, ?, ?)
             ON CONFLICT (org_id, mode, document_id) DO UPDATE SET bytes = excluded.bytes`,
          )
          .run(tenant.orgId, tenant.mode, contentKeyName(key), bytes),
      ),
      TE.map(() => undefined),
    ),

  get: (tenant, key) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare('SELECT bytes FROM document_contents WHERE org_id = ? AND mode = ? AND document_id = ?')
          .get(tenant.orgId, tenant.mode, contentKeyName(key)),
      ),
      TE.chainEitherK((row) =>
        row === undefined
          ? E.right(null)
          : pipe(
              decode(ContentRow, `document_contents row ${contentKeyName(key)}`)(row),
              E.map((r) => r.bytes),
            ),
      ),
    ),
});
