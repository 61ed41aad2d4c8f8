import type { DocumentContentStore, StagedContent, StoreError, StoreResult, Tenant } from '@esig/core';
import { isStaged, stagedContent, storeFailure } from '@esig/core';
import { randomUUID } from 'node:crypto';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import { contentKeyName } from '@esig/store-sql';
import * as t from 'io-ts';
import type { Conn } from './connection.js';
import { attempt } from './connection.js';
import { limitParam } from './sql-text.js';
import { BatchLimit, Bytes, Int, decode, decodeAll, nullable, rowType } from './decode.js';

/** How content is staged: the size of a piece, and the clock its pieces are stamped with (for the purge). */
export interface ContentOptions {
  /** Bytes per piece (default `PIECE_BYTES`); a test makes it small to have many pieces. */
  readonly pieceBytes: number;
  readonly now: () => Date;
  /**
   * Waits until the WAL's backlog has been checkpointed (the background checkpointer's `checkpointed`), called
   * every `PIECES_PER_SETTLE` pieces. Without it a large content outpaced the checkpoints: the WAL grew past the
   * write connection's backstop (10,000 pages) and that connection copied it all at once, on the event loop
   * (200–300 ms, staging 15.7 MB contents back to back). Absent (no background checkpointer), SQLite's own
   * checkpoint every 1,000 pages runs on the writer, as for every other write.
   */
  readonly settle?: () => Promise<void>;
}

/** Pieces (4 MiB at 256 KiB) staged between two waits for the checkpoints (`ContentOptions.settle`). */
export const PIECES_PER_SETTLE = 16;

/**
 * 256 KiB a piece: its INSERT and its share of a COMMIT (64 WAL frames of 4 KiB) take about a millisecond, so
 * a 15 MB upload is 60 short writes among other requests' instead of one of ~80 ms.
 */
export const PIECE_BYTES = 256 * 1024;

export const DEFAULT_CONTENT_OPTIONS: ContentOptions = { pieceBytes: PIECE_BYTES, now: () => new Date() };

/** Pieces read per statement by `get`, with a turn of the event loop between statements. */
const PIECES_PER_READ = 4;
/** Pieces deleted per call of `discardSome` (one transaction each at the top level). */
export const DISCARD_BATCH = 16;
/** `get` reads again from the start when the key was stored anew while it read; this many times at most. */
const GET_ATTEMPTS = 3;

const ContentRow = rowType({ bytes: Bytes, staged_id: nullable(t.string) });
const PieceRow = rowType({ seq: Int, bytes: Bytes });
const StagedRow = rowType({ staged_id: nullable(t.string) });
const PiecesFound = rowType({ n: Int, size: Int, last: nullable(Int) });

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The SQLite content store plus what its top level (`topLevelStores`) composes `stage` and `discard` from, one
 * transaction at a time. Not part of the port: only this adapter calls them.
 */
export interface SqliteDocumentContents extends DocumentContentStore {
  /** Writes one piece of the staged content `stagedId`. */
  writePiece(tenant: Tenant, piece: { readonly stagedId: string; readonly seq: number; readonly bytes: Uint8Array; readonly stagedAt: string }): StoreResult<void>;
  /** Deletes at most `max` pieces of `staged`, unless a key names it; answers how many. */
  discardSome(tenant: Tenant, staged: StagedContent, max: number): StoreResult<number>;
}

/** Stages `bytes` in pieces with `writePiece`, a turn of the event loop between pieces. At least one piece, even when empty. */
export const stageInPieces = async (
  writePiece: SqliteDocumentContents['writePiece'],
  tenant: Tenant,
  bytes: Uint8Array,
  o: ContentOptions,
): Promise<E.Either<StoreError, StagedContent>> => {
  const stagedId = randomUUID();
  const stagedAt = o.now().toISOString();
  for (let seq = 0, at = 0; seq === 0 || at < bytes.byteLength; seq++, at += o.pieceBytes) {
    if (seq > 0) await (o.settle !== undefined && seq % PIECES_PER_SETTLE === 0 ? o.settle() : turn());
    // A view: the driver copies it into the statement when it binds.
    const written = await writePiece(tenant, { stagedId, seq, bytes: bytes.subarray(at, at + o.pieceBytes), stagedAt })();
    if (E.isLeft(written)) return written;
  }
  return E.right(stagedContent({ bytes: null, ref: stagedId, size: bytes.byteLength }));
};

/** Discards with `discardSome` until nothing is left of it. */
export const discardInBatches = async (discardSome: SqliteDocumentContents['discardSome'], tenant: Tenant, staged: StagedContent): Promise<E.Either<StoreError, void>> => {
  for (;;) {
    const r = await discardSome(tenant, staged, DISCARD_BATCH)();
    if (E.isLeft(r)) return r;
    if (r.right < DISCARD_BATCH) return E.right(undefined);
    await turn();
  }
};

/**
 * PDF bytes, keyed by (org_id, mode, document_id) where document_id is `contentKeyName(key)`. Content staged
 * ahead of its transaction lives in `content_pieces`, and its row names it by `staged_id` (its `bytes` empty);
 * plain bytes put in a transaction, and rows from before staging, are held whole in the row. `put` overwrites:
 * storing the same key twice keeps the last, and deletes the pieces the old row named (unless another key names
 * them). Pieces are never changed once written, and deleted only once no row names them: so a `get` that finds
 * the same row naming the same pieces after reading them has read them whole. The driver copies the bytes on
 * write and hands out a fresh buffer on read, so neither side can alter what the other holds.
 */
export const sqliteDocumentContents = (conn: Conn, o: ContentOptions = DEFAULT_CONTENT_OPTIONS): SqliteDocumentContents => {
  const writePiece: SqliteDocumentContents['writePiece'] = (tenant, p) =>
    pipe(
      attempt(conn, (c) =>
        c
          .prepare('INSERT INTO content_pieces (org_id, mode, staged_id, seq, bytes, staged_at) VALUES (?, ?, ?, ?, ?, ?)')
          .run(tenant.orgId, tenant.mode, p.stagedId, p.seq, p.bytes, p.stagedAt),
      ),
      TE.map(() => undefined),
    );

  const discardSome: SqliteDocumentContents['discardSome'] = (tenant, staged, limit) =>
    staged.ref === null
      ? TE.right(0)
      : pipe(
          attempt(
            conn,
            (c) =>
              c
                .prepare(
                  `DELETE FROM content_pieces WHERE rowid IN (
                     SELECT rowid FROM content_pieces WHERE org_id = ? AND mode = ? AND staged_id = ?
                       AND NOT EXISTS (SELECT 1 FROM document_contents d WHERE d.org_id = ? AND d.mode = ? AND d.staged_id = ?)
                     ${limitParam('?')})`,
                )
                .run(tenant.orgId, tenant.mode, staged.ref, tenant.orgId, tenant.mode, staged.ref, limit).changes,
          ),
        );

  const stagedIdOf = (tenant: Tenant, name: string): StoreResult<string | null | undefined> =>
    pipe(
      attempt(conn, (c) => c.prepare('SELECT staged_id FROM document_contents WHERE org_id = ? AND mode = ? AND document_id = ?').get(tenant.orgId, tenant.mode, name)),
      TE.chainEitherK((row) => (row === undefined ? E.right(undefined) : pipe(decode(StagedRow, `document_contents row ${name}`)(row), E.map((r) => r.staged_id)))),
    );

  /** The pieces of `stagedId`, concatenated, a few per statement; Left(null) when some went missing meanwhile. */
  const readPieces = async (tenant: Tenant, stagedId: string): Promise<E.Either<StoreError | null, Uint8Array>> => {
    const parts: Uint8Array[] = [];
    for (let next = 0; ; ) {
      if (next > 0) await turn();
      const rows = await attempt(conn, (c) =>
        c
          .prepare(`SELECT seq, bytes FROM content_pieces WHERE org_id = ? AND mode = ? AND staged_id = ? AND seq >= ? ORDER BY seq ${limitParam('?')}`)
          .all(tenant.orgId, tenant.mode, stagedId, next, PIECES_PER_READ),
      )();
      if (E.isLeft(rows)) return rows;
      const pieces = decodeAll(decode(PieceRow, `content_pieces of ${stagedId}`))(rows.right as unknown[]);
      if (E.isLeft(pieces)) return pieces;
      for (const p of pieces.right) {
        if (p.seq !== next) return E.left(null);
        parts.push(p.bytes);
        next++;
      }
      if (pieces.right.length < PIECES_PER_READ) return next === 0 ? E.left(null) : E.right(parts.length === 1 ? parts[0]! : Buffer.concat(parts));
    }
  };

  const put: DocumentContentStore['put'] = (tenant, key, content) => {
    const name = contentKeyName(key);
    const staged = isStaged(content) ? content : null;
    const whole = staged === null ? (content as Uint8Array) : staged.ref === null ? staged.bytes : null;
    return pipe(
      TE.Do,
      TE.bind('before', () => stagedIdOf(tenant, name)),
      TE.chainFirst(() =>
        whole !== null || staged === null
          ? TE.right(undefined)
          : pipe(
              // The pieces must all be there, in this tenant: a handle whose content was purged, discarded or
              // staged elsewhere would otherwise store a key that reads as other bytes, or none.
              attempt(conn, (c) =>
                c
                  .prepare('SELECT count(*) AS n, coalesce(sum(length(bytes)), 0) AS size, max(seq) AS last FROM content_pieces WHERE org_id = ? AND mode = ? AND staged_id = ?')
                  .get(tenant.orgId, tenant.mode, staged.ref),
              ),
              TE.chainEitherK(decode(PiecesFound, `content_pieces of ${staged.ref}`)),
              TE.chainW((f) =>
                f.n > 0 && f.last === f.n - 1 && f.size === staged.size
                  ? TE.right(undefined)
                  : TE.left(storeFailure(new Error(`The staged content ${staged.ref} is not all there in this tenant (purged, discarded or staged elsewhere); nothing was stored.`))),
              ),
            ),
      ),
      TE.chainFirst(() => {
        if (whole === null && staged === null) return TE.left(storeFailure(new Error('A staged content without bytes or reference.')));
        return attempt(conn, (c) =>
          c
            .prepare(
              `INSERT INTO document_contents (org_id, mode, document_id, bytes, staged_id) VALUES (?, ?, ?, ?, ?)
               ON CONFLICT (org_id, mode, document_id) DO UPDATE SET bytes = excluded.bytes, staged_id = excluded.staged_id`,
            )
            .run(tenant.orgId, tenant.mode, name, whole ?? EMPTY, whole === null ? staged!.ref : null),
        );
      }),
      TE.chainFirst(({ before }) =>
        before === null || before === undefined || before === (whole === null ? staged!.ref : null)
          ? TE.right(undefined)
          : attempt(conn, (c) =>
              c
                .prepare(
                  `DELETE FROM content_pieces WHERE org_id = ? AND mode = ? AND staged_id = ?
                     AND NOT EXISTS (SELECT 1 FROM document_contents d WHERE d.org_id = ? AND d.mode = ? AND d.staged_id = ?)`,
                )
                .run(tenant.orgId, tenant.mode, before, tenant.orgId, tenant.mode, before),
            ),
      ),
      TE.map(() => undefined),
    );
  };

  const get: DocumentContentStore['get'] = (tenant, key) => async () => {
    const name = contentKeyName(key);
    for (let i = 0; i < GET_ATTEMPTS; i++) {
      const found = await attempt(conn, (c) => c.prepare('SELECT bytes, staged_id FROM document_contents WHERE org_id = ? AND mode = ? AND document_id = ?').get(tenant.orgId, tenant.mode, name))();
      if (E.isLeft(found)) return found;
      if (found.right === undefined) return E.right(null);
      const row = decode(ContentRow, `document_contents row ${name}`)(found.right);
      if (E.isLeft(row)) return row;
      const stagedId = row.right.staged_id;
      if (stagedId === null) return E.right(row.right.bytes);
      const bytes = await readPieces(tenant, stagedId);
      if (E.isLeft(bytes) && bytes.left !== null) return E.left(bytes.left);
      // Still the same pieces under the key: none was deleted while they were read (see above).
      const after = await stagedIdOf(tenant, name)();
      if (E.isLeft(after)) return after;
      if (E.isRight(bytes) && after.right === stagedId) return bytes;
    }
    return E.left(storeFailure(new Error(`The content of ${name} was stored anew ${GET_ATTEMPTS} times while it was read.`)));
  };

  return {
    // Inside a transaction (this store bound to its connection), the pieces are written in it: they commit
    // or roll back with it. The top level writes each piece in a transaction of its own (`topLevelStores`).
    stage: (tenant, bytes) => () => stageInPieces(writePiece, tenant, bytes, o),
    put,
    get,
    discard: (tenant, staged) => () => discardInBatches(discardSome, tenant, staged),
    purgeStaged: (before, limit) =>
      // SQLite reads a negative LIMIT as none at all.
      !BatchLimit.is(limit)
        ? TE.left(storeFailure(new RangeError(`limit must be a whole number from 1 to the purge batch maximum; got ${limit}`)))
        : attempt(
        conn,
        (c) =>
          c
            .prepare(
              `DELETE FROM content_pieces WHERE rowid IN (
                 SELECT p.rowid FROM content_pieces p WHERE p.staged_at < ?
                   AND NOT EXISTS (SELECT 1 FROM document_contents d WHERE d.org_id = p.org_id AND d.mode = p.mode AND d.staged_id = p.staged_id)
                 ${limitParam('?')})`,
            )
            .run(before, limit).changes,
      ),
    writePiece,
    discardSome,
  };
};

const EMPTY = new Uint8Array(0);
