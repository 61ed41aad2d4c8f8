import type { DocumentContentStore } from '@esig/core';
import { storeFailure, writingWhole } from '@esig/core';
import * as t from 'io-ts';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { contentKeyName } from '@esig/store-sql';
import type { Conn } from './connection.js';
import { run } from './connection.js';
import { Bytes, decode, rowType } from './decode.js';

/**
 * Content larger than this is read in slices of this size, a statement each. The driver decodes a
 * bytea answer on the event loop (its hex text, then the bytes): a 15 MB PDF read whole held the loop for about
 * 80 ms, every API request in the process waiting behind it; a slice of 512 KiB holds it for about 3 ms, and
 * other requests run while the next slice is on its way.
 */
export const READ_SLICE_BYTES = 512 * 1024;
/** How many times a read starts again when the content is replaced under it before it gives up. */
const READ_ATTEMPTS = 5;

const WHERE = 'WHERE org_id = $1 AND mode = $2 AND document_id = $3';
// The size comes from the value's header (no detoasting); small content comes whole in the same round trip.
// `xmin` names the row version: a slice read from another version (the content replaced meanwhile) is not mixed in.
const FIRST_SQL = `SELECT octet_length(bytes) AS size, xmin::text AS version, CASE WHEN octet_length(bytes) <= $4 THEN bytes END AS bytes FROM document_contents ${WHERE}`;
// Migration 18 stores the column uncompressed, so that PostgreSQL fetches only a slice's own TOAST chunks.
const SLICE_SQL = `SELECT xmin::text AS version, substring(bytes FROM $4 FOR $5) AS bytes FROM document_contents ${WHERE}`;
const FirstRow = rowType({ size: t.number, version: t.string, bytes: t.union([Bytes, t.null]) });
const SliceRow = rowType({ version: t.string, bytes: Bytes });

/**
 * PDF bytes as bytea, keyed by (org_id, mode, document_id) where document_id is `contentKeyName(key)`. `put` overwrites: storing the same document's
 * bytes twice keeps the last. Bytes are copied on the way in and out, so neither side can alter what the
 * other holds. Written whole, in the transaction that names them (`writingWhole`): the driver sends them over
 * the socket without holding the event loop, and PostgreSQL writes them in its own processes. Read in slices
 * (`READ_SLICE_BYTES`), checked to come from one row version.
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

  get: (tenant, key) => async () => {
    const name = contentKeyName(key);
    const where = [tenant.orgId, tenant.mode, name];
    for (let attempt = 0; attempt < READ_ATTEMPTS; attempt++) {
      const first = await run(conn, 'read', FIRST_SQL, [...where, READ_SLICE_BYTES])();
      if (E.isLeft(first)) return first;
      const [row] = first.right.rows;
      if (row === undefined) return E.right(null);
      const head = decode(FirstRow, `document_contents row ${name}`)(row);
      if (E.isLeft(head) || head.right.bytes !== null) return pipe(head, E.map((h) => h.bytes!));
      const { size, version } = head.right;
      const whole = new Uint8Array(size);
      let same = true;
      for (let offset = 0; same && offset < size; offset += READ_SLICE_BYTES) {
        const slice = await run(conn, 'read', SLICE_SQL, [...where, offset + 1, READ_SLICE_BYTES])();
        if (E.isLeft(slice)) return slice;
        const [r] = slice.right.rows;
        // Deleted since the first statement: there is none now. (Replaced: read again from the start, below.)
        if (r === undefined) return E.right(null);
        const piece = decode(SliceRow, `document_contents row ${name}`)(r);
        if (E.isLeft(piece)) return piece;
        same = piece.right.version === version && piece.right.bytes.byteLength === Math.min(READ_SLICE_BYTES, size - offset);
        if (same) whole.set(piece.right.bytes, offset);
      }
      if (same) return E.right(whole);
    }
    return E.left(storeFailure(new Error(`the content ${name} was replaced ${READ_ATTEMPTS} times while it was read`)));
  },
  });
