import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  // Room for one upload of the largest size and a little more.
  s = await startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(100 * 1024) });
});
afterAll(async () => s.close());

const upload = (bytes: Uint8Array) => s.call('POST', '/api/v1/documents?name=next.pdf', { raw: { bytes, contentType: 'application/pdf' } });

describe('uploads held at once (ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT)', () => {
  it('answers 503 server_busy, with Retry-After and before reading it, to an upload that does not fit beside those held', async () => {
    const held = await s.holdUpload(60_000);
    try {
      // Garbage of the largest size: refused before a byte is read, so its content never matters.
      const big = await upload(new Uint8Array(60_000).fill(0x41));
      expect(big.status).toBe(503);
      expect(big.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(big.headers.get('retry-after')).toBe('5');
      expect(big.body).toMatchObject({ status: 503, code: 'server_busy', detail: 'The server is receiving too many uploads; retry after 5 s.' });
      // A client that waits for `100 Continue` before sending its body is answered 503 instead, and sends none of it.
      await expect(s.holdUpload(60_000)).rejects.toThrow(/was not taken: HTTP\/1\.1 503 /);
      // Reservations are by size: a small upload still fits beside the one held.
      expect((await s.uploadPdf('small.pdf', 1)).pageCount).toBe(1);
    } finally {
      held.destroy();
    }
    // The held upload's reservation ends with its connection, once the server sees it close: the same large body is
    // then read (and refused as no PDF).
    let read = await upload(new Uint8Array(60_000).fill(0x41));
    for (let i = 0; read.status === 503 && i < 500; i++) {
      await new Promise((ok) => setTimeout(ok, 20));
      read = await upload(new Uint8Array(60_000).fill(0x41));
    }
    expect(read.status).toBe(422);
    expect(read.body.code).toBe('invalid_document');
  });

  it('reserves the largest size for an upload sent without a length, and lets it go once it is answered', async () => {
    const held = await s.holdUpload('chunked');
    // 64 KiB held of 100: a second upload of 40 KB does not fit.
    expect((await upload(new Uint8Array(40_000).fill(0x41))).status).toBe(503);
    // The held upload's body ends and it is answered (no PDF): what it held is free before its answer is read.
    expect(await held.finish()).toMatch(/^HTTP\/1\.1 422 /);
    expect((await upload(new Uint8Array(40_000).fill(0x41))).status).toBe(422);
    // Answered uploads hold nothing: more of them, one after another, than the budget holds at once.
    for (let i = 0; i < 5; i++) expect((await upload(new Uint8Array(60_000).fill(0x41))).status).toBe(422);
  });

  it('answers `Expect: 100-continue` only once it reads the body, after the caller is authenticated', async () => {
    await expect(s.holdUpload(1000, 'esig_test_nope')).rejects.toThrow(/was not taken: HTTP\/1\.1 401 /);
    const held = await s.holdUpload(1000);
    expect(await held.finish()).toMatch(/^HTTP\/1\.1 422 /);
  });

  it('refuses a budget smaller than one upload of the largest size when it starts', async () => {
    await expect(startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(1024) })).rejects.toThrow(
      /ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT/,
    );
  });
});
