import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import { MAX_PURGE_BATCH } from '@esig/core';
import { TENANT_A, TENANT_B, makeDocument, ok, tagOf, fails } from '@esig/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import type { SqliteStore } from '../src/index.js';
import { openSqliteStore } from '../src/index.js';

/**
 * Content staged ahead of its transaction is written in pieces, each in a transaction of its own: other
 * transactions commit between them. Shown by the order of commits, never by time.
 */

const dirs: string[] = [];
const opened: Array<{ close(): void }> = [];
const openStore = (contentPieceBytes: number): { s: SqliteStore; raw: Database.Database } => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-sqlite-staged-'));
  dirs.push(dir);
  const file = path.join(dir, 'esig.db');
  const s = openSqliteStore({ path: file, contentPieceBytes });
  // A connection of the test's own, to look at the tables as they are committed.
  const raw = new Database(file, { readonly: true });
  opened.push(raw, s);
  return { s, raw };
};
afterEach(() => {
  for (const o of opened.splice(0)) o.close();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

const pieces = (raw: Database.Database): number => (raw.prepare('SELECT count(*) AS n FROM content_pieces').get() as { n: number }).n;
const upload = (documentId: string) => ({ kind: 'upload' as const, documentId });
const bytesOf = (n: number) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + 7) & 0xff);

describe('SQLite: staged content', () => {
  it('is written a piece per transaction: a transaction started after the staging commits before it has finished', async () => {
    const { s, raw } = openStore(1024);
    const order: string[] = [];
    let piecesWhenOtherCommitted = -1;
    const staging = ok(s.stores.documentContents.stage(TENANT_A, bytesOf(64 * 1024))).then((staged) => (order.push('staged'), staged));
    // Started after the staging, in the same turn.
    const other = ok(s.uow.transaction((tx) => tx.documents.insert(makeDocument(TENANT_A)))).then(() => {
      order.push('other committed');
      piecesWhenOtherCommitted = pieces(raw);
    });
    const [staged] = await Promise.all([staging, other]);
    expect(order).toEqual(['other committed', 'staged']);
    expect(piecesWhenOtherCommitted).toBeGreaterThan(0);
    expect(piecesWhenOtherCommitted).toBeLessThan(64);
    expect(pieces(raw)).toBe(64);
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_1'), staged));
    expect(Buffer.from((await ok(s.stores.documentContents.get(TENANT_A, upload('doc_1'))))!).equals(Buffer.from(bytesOf(64 * 1024)))).toBe(true);
    // The row names the pieces; its own bytes are empty.
    expect(raw.prepare("SELECT length(bytes) AS n, staged_id FROM document_contents WHERE document_id LIKE '%doc_1%'").get()).toEqual({ n: 0, staged_id: expect.any(String) });
  });

  it('staged and never put: purged, it leaves no row, and a later put of it fails and stores nothing', async () => {
    const { s, raw } = openStore(100);
    const unused = await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(1000)));
    const kept = await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(500)));
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_kept'), kept));
    expect(pieces(raw)).toBe(15);
    // Staged after this cutoff: nothing to purge.
    expect(await ok(s.stores.documentContents.purgeStaged('2000-01-01T00:00:00.000Z', MAX_PURGE_BATCH))).toBe(0);
    expect(await ok(s.stores.documentContents.purgeStaged('9999-01-01T00:00:00.000Z', 4))).toBe(4);
    expect(await ok(s.stores.documentContents.purgeStaged('9999-01-01T00:00:00.000Z', MAX_PURGE_BATCH))).toBe(6);
    expect(pieces(raw)).toBe(5);
    expect(tagOf(await fails(s.stores.documentContents.put(TENANT_A, upload('doc_late'), unused)))).toBe('StoreFailure');
    expect(await ok(s.stores.documentContents.get(TENANT_A, upload('doc_late')))).toBeNull();
    expect(Array.from((await ok(s.stores.documentContents.get(TENANT_A, upload('doc_kept'))))!)).toEqual(Array.from(bytesOf(500)));
  });

  it('discard removes only content never put, in its own tenant; a put in another tenant fails', async () => {
    const { s, raw } = openStore(100);
    const staged = await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(2500)));
    expect(tagOf(await fails(s.stores.documentContents.put(TENANT_B, upload('doc_1'), staged)))).toBe('StoreFailure');
    await ok(s.stores.documentContents.discard(TENANT_B, staged));
    expect(pieces(raw)).toBe(25);
    await ok(s.stores.documentContents.discard(TENANT_A, staged));
    expect(pieces(raw)).toBe(0);
    const put = await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(300)));
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_2'), put));
    await ok(s.stores.documentContents.discard(TENANT_A, put));
    expect(pieces(raw)).toBe(3);
  });

  it('a put that replaces a key deletes the pieces it no longer names', async () => {
    const { s, raw } = openStore(100);
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_1'), await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(1000)))));
    expect(pieces(raw)).toBe(10);
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_1'), await ok(s.stores.documentContents.stage(TENANT_A, bytesOf(200)))));
    expect(pieces(raw)).toBe(2);
    await ok(s.stores.documentContents.put(TENANT_A, upload('doc_1'), bytesOf(50)));
    expect(pieces(raw)).toBe(0);
    expect(Array.from((await ok(s.stores.documentContents.get(TENANT_A, upload('doc_1'))))!)).toEqual(Array.from(bytesOf(50)));
  });

  it('has the background checkpoints keep up with a large staging: the WAL stays far below the writer’s own backstop', async () => {
    // Without the waits, pieces outran the checkpointer's ticks and the WAL grew past the write connection's
    // backstop (10,000 pages, 40 MB), which then copied it all at once on the event loop (200–300 ms here).
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'esig-sqlite-staged-'));
    dirs.push(dir);
    const file = path.join(dir, 'esig.db');
    const s = openSqliteStore({ path: file });
    opened.push(s);
    let largest = 0;
    const measure = () => {
      try {
        largest = Math.max(largest, fs.statSync(`${file}-wal`).size);
      } catch {
        // No WAL file at this moment.
      }
    };
    const watch = setInterval(measure, 1);
    try {
      for (let i = 0; i < 3; i++) {
        const staged = await ok(s.stores.documentContents.stage(TENANT_A, new Uint8Array(16 * 1024 * 1024).fill(i + 1)));
        await ok(s.stores.documentContents.put(TENANT_A, upload(`doc_big_${i}`), staged));
        measure();
      }
    } finally {
      clearInterval(watch);
    }
    // 48 MiB staged; the WAL holds a few pieces' worth between checkpoints.
    expect(largest).toBeGreaterThan(0);
    expect(largest).toBeLessThan(16 * 1024 * 1024);
    expect((await ok(s.stores.documentContents.get(TENANT_A, upload('doc_big_2'))))!.every((b) => b === 3)).toBe(true);
  });
});
