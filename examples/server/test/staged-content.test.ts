import { join } from 'node:path';
import Database from 'better-sqlite3';
import { PDFDocument } from 'pdf-lib';
import { makePdf } from '@esig/testkit/pdf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

// Uploads and seals write their bytes ahead of their transaction (staged, on SQLite in pieces of 256 KiB, each
// committed on its own), and the transaction only names them. What a command staged and did not store must not
// stay behind: these look at the database file itself.
let s: TestServer;
let db: Database.Database;

beforeAll(async () => {
  s = await startTestServer({ ESIG_RATE_LIMIT_KEY: '100000' });
  db = new Database(join(s.dir, 'esig.db'), { readonly: true, fileMustExist: true });
}, 60_000);
afterAll(async () => {
  db?.close();
  await s?.close();
}, 30_000);

/** Staged ids that no stored content names: what a command left behind. */
const orphans = () => (db.prepare('SELECT count(DISTINCT staged_id) AS n FROM content_pieces p WHERE NOT EXISTS (SELECT 1 FROM document_contents d WHERE d.org_id = p.org_id AND d.mode = p.mode AND d.staged_id = p.staged_id)').get() as { n: number }).n;
const pieces = () => (db.prepare('SELECT count(*) AS n FROM content_pieces').get() as { n: number }).n;

/** Waits for `f` to hold: the release runs after the answer is sent, not before. */
const eventually = async (f: () => boolean, what: string) => {
  for (let i = 0; i < 400; i++) {
    if (f()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`never: ${what}`);
};

describe('staged content', () => {
  it('an upload is stored as pieces that its document names, and reads back exactly', async () => {
    // Several pieces (256 KiB each): a one-page PDF carrying 700 kB of attached bytes.
    const doc = await PDFDocument.create();
    doc.addPage();
    await doc.attach(Uint8Array.from({ length: 700_000 }, (_, i) => (i * 31 + 7) % 251), 'data.bin', { mimeType: 'application/octet-stream' });
    const bytes = await doc.save();
    const up = await s.call('POST', '/api/v1/documents?name=big.pdf', { raw: { bytes, contentType: 'application/pdf' } });
    expect(up.status).toBe(201);
    const content = await fetch(`${s.url}/api/v1/documents/${up.body.id}/content`, { headers: { authorization: `Bearer ${s.key}` } });
    expect(Buffer.from(await content.arrayBuffer()).equals(Buffer.from(bytes))).toBe(true);
    const row = db.prepare('SELECT length(bytes) AS whole, staged_id FROM document_contents WHERE document_id = ?').get(up.body.id) as { whole: number; staged_id: string | null };
    expect(row.whole).toBe(0);
    expect(row.staged_id).not.toBeNull();
    expect((db.prepare('SELECT count(*) AS n FROM content_pieces WHERE staged_id = ?').get(row.staged_id) as { n: number }).n).toBe(Math.ceil(bytes.byteLength / (256 * 1024)));
    expect(orphans()).toBe(0);
  });

  it('an upload under an Idempotency-Key used for another file is refused before its file is inspected or staged', async () => {
    // An upload looks its key up first (WriteRoute.lookUpKeyFirst): a key bound to another body is refused 422 at
    // once, so a file that is not even a PDF is refused for its key, not for its content, and nothing is staged.
    const first = await s.call('POST', '/api/v1/documents?name=first.pdf', { raw: { bytes: await makePdf(2), contentType: 'application/pdf' }, headers: { 'idempotency-key': 'staged-other-1' } });
    expect(first.status).toBe(201);
    const before = pieces();
    const other = await s.call('POST', '/api/v1/documents?name=first.pdf', { raw: { bytes: await makePdf(3), contentType: 'application/pdf' }, headers: { 'idempotency-key': 'staged-other-1' } });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe('idempotency_key_reused');
    const garbage = await s.call('POST', '/api/v1/documents?name=first.pdf', { raw: { bytes: new TextEncoder().encode('not a pdf at all'), contentType: 'application/pdf' }, headers: { 'idempotency-key': 'staged-other-1' } });
    expect(garbage.status).toBe(422);
    expect(garbage.body.code).toBe('idempotency_key_reused');
    expect(pieces()).toBe(before);
    expect(orphans()).toBe(0);
  });

  it('a replayed upload (the same Idempotency-Key) stores the bytes once: the replay stages nothing', async () => {
    const bytes = await makePdf(3);
    const first = await s.call('POST', '/api/v1/documents?name=once.pdf', { raw: { bytes, contentType: 'application/pdf' }, headers: { 'idempotency-key': 'staged-replay-1' } });
    expect(first.status).toBe(201);
    const afterFirst = pieces();
    const again = await s.call('POST', '/api/v1/documents?name=once.pdf', { raw: { bytes, contentType: 'application/pdf' }, headers: { 'idempotency-key': 'staged-replay-1' } });
    expect(again.status).toBe(201);
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.get('idempotency-replayed')).toBe('true');
    expect(pieces()).toBe(afterFirst);
    expect(orphans()).toBe(0);
  });

  it('a sealed request’s finished PDF and certificate are stored as pieces, and nothing staged is left', async () => {
    const { req } = await s.draftReady();
    expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
    const token = await s.signingToken('ada@example.com');
    expect((await s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body: { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } } })).status).toBe(200);
    await eventually(() => (db.prepare('SELECT count(*) AS n FROM document_contents WHERE staged_id IS NOT NULL AND document_id LIKE ?').get(`%${req.id}%`) as { n: number }).n === 2, 'the finished PDF and certificate stored');
    const finished = await fetch(`${s.url}/api/v1/signature-requests/${req.id}/document`, { headers: { authorization: `Bearer ${s.key}` } });
    expect(finished.status).toBe(200);
    expect(Buffer.from(await finished.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
    await eventually(() => orphans() === 0, 'the seal’s staged content named or discarded');
  });
});
