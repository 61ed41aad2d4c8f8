import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PdfInspector } from '@esig/core';
import { T } from '../src/tokens.js';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  // Room for one upload of the largest size and a little more.
  s = await startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(100 * 1024) });
});
afterAll(async () => s.close());

const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

/** Whether an upload of `bytes` fits beside those held now (the server answers `100 Continue` rather than 503). */
const fits = (bytes: number) =>
  s.holdUpload(bytes).then(
    // Its own reservation ends once the server sees its connection close.
    async (held) => (held.destroy(), await sleep(50), true),
    (e: unknown) => {
      if (/was not taken: HTTP\/1\.1 503 /.test(String(e))) return false;
      throw e;
    },
  );

/** Polls `fits(bytes)` until it answers `want`. */
const fitsSoon = async (bytes: number, want: boolean) => {
  for (let i = 0; i < 100; i++) {
    if ((await fits(bytes)) === want) return want;
    await sleep(20);
  }
  return !want;
};

/** A connection to the server that has sent `parts`; what it receives is in `text()`. */
const sendRaw = (...parts: Array<string | Uint8Array>) =>
  new Promise<{ socket: Socket; text: () => string }>((resolve, reject) => {
    const { hostname, port } = new URL(s.url);
    let text = '';
    const socket = connect(Number(port), hostname, () => {
      for (const p of parts) socket.write(p);
      resolve({ socket, text: () => text });
    });
    socket.on('data', (b) => (text += b.toString('latin1')));
    socket.on('error', reject);
  });

const uploadHead = (length: number, extra = '') =>
  `POST /api/v1/documents?name=raw.pdf HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/pdf\r\nContent-Length: ${length}\r\n${extra}\r\n`;

/** Holds every upload at its inspection until `open` (a PDF thread busy for as long as the test says); counts those held. */
const holdInspections = () => {
  const inspector = s.container.resolve(T.PdfPool).inspector as { inspect: PdfInspector['inspect'] };
  const inspect = inspector.inspect;
  let open: () => void = () => undefined;
  const opened = new Promise<void>((ok) => (open = ok));
  let held = 0;
  inspector.inspect = (bytes, limits) => async () => {
    held++;
    await opened;
    return inspect(bytes, limits)();
  };
  return {
    held: () => held,
    open: () => {
      inspector.inspect = inspect;
      open();
    },
  };
};

const until = async (what: () => boolean) => {
  for (let i = 0; i < 250 && !what(); i++) await sleep(20);
  expect(what()).toBe(true);
};

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

  it('lets a pipelined upload go when its connection closes before the answer ahead of it: what it held is not kept for good', async () => {
    const inspections = holdInspections();
    try {
      // Two uploads on one connection: the second is read, and its answer waits for the first one's, which is held.
      const c = await sendRaw(uploadHead(1000), new Uint8Array(1000).fill(0x41), uploadHead(60_000), new Uint8Array(60_000).fill(0x41));
      await until(() => inspections.held() === 2);
      // The client goes away before either is answered.
      c.socket.destroy();
      await sleep(100);
    } finally {
      inspections.open();
    }
    // Both are answered (to no one): nothing of them is held, and an upload of the largest size fits again.
    expect(await fitsSoon(60_000, true)).toBe(true);
  });

  it('keeps counting an upload whose client left after sending it, until the server is done with it', async () => {
    const inspections = holdInspections();
    try {
      const c = await sendRaw(uploadHead(60_000), new Uint8Array(60_000).fill(0x41));
      await until(() => inspections.held() === 1);
      // The client goes away (it timed out, say): its 60 000 bytes are still held, read and stored.
      c.socket.destroy();
      await sleep(100);
      expect(await fits(60_000)).toBe(false);
    } finally {
      inspections.open();
    }
    // Once it is answered (to no one), what it held is free.
    expect(await fitsSoon(60_000, true)).toBe(true);
  });

  it('counts an upload sent compressed (Content-Encoding) at the largest size: it is held decoded, whatever its length', async () => {
    const inspections = holdInspections();
    try {
      // 60 000 bytes, gzipped to about a hundred: the server inflates them to 60 000 before it inspects them.
      const zipped = gzipSync(new Uint8Array(60_000).fill(0x41));
      expect(zipped.length).toBeLessThan(1000);
      const c = await sendRaw(uploadHead(zipped.length, 'Content-Encoding: gzip\r\n'), zipped);
      await until(() => inspections.held() === 1);
      expect(await fits(60_000)).toBe(false);
      c.socket.destroy();
    } finally {
      inspections.open();
    }
    expect(await fitsSoon(60_000, true)).toBe(true);
  });

  it('answers 413 to a body declared over the limit from its headers, without `100 Continue` and without reading it', async () => {
    // An upload: refused before a byte of it is sent (the client waits for `100 Continue`).
    const taken = await s.holdUpload(10 * 64 * 1024).then(
      (held) => (held.destroy(), 'taken: 100 Continue'),
      (e: unknown) => String(e),
    );
    expect(taken).toMatch(/was not taken: HTTP\/1\.1 413 /);
    // A JSON call over ESIG's JSON limit (1 MiB), the same.
    const c = await sendRaw(
      `POST /api/v1/signature-requests HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/json\r\nContent-Length: ${50 * 1024 * 1024}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await until(() => c.text().includes('\r\n\r\n'));
    expect(c.text()).toMatch(/^HTTP\/1\.1 413 /);
    expect(c.text()).toMatch(/\r\nConnection: close\r\n/i);
    expect(c.text()).toContain('"code":"payload_too_large"');
    c.socket.destroy();
    // The signer API (a well-formed link: the body's size is judged before the link is looked up) and the OAuth
    // endpoints, the same, each in its own shape.
    const declared = (path: string, length: number, type = 'application/json') =>
      sendRaw(`POST ${path} HTTP/1.1\r\nHost: localhost\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\nExpect: 100-continue\r\n\r\n`);
    for (const [path, type, body] of [
      [`/api/v1/signing/${'A'.repeat(43)}/sign`, 'application/json', '"code":"payload_too_large"'],
      ['/oauth/token', 'application/x-www-form-urlencoded', '"error":"invalid_request"'],
      ['/oauth/register', 'application/json', '"error":"invalid_client_metadata"'],
    ] as const) {
      const r = await declared(path, 10 * 1024 * 1024, type);
      await until(() => r.text().includes('\r\n\r\n'));
      expect(r.text(), path).toMatch(/^HTTP\/1\.1 413 /);
      expect(r.text(), path).toMatch(/\r\nConnection: close\r\n/i);
      await until(() => r.text().includes(body));
      r.socket.destroy();
    }
    // A path the OAuth router does not serve is still not found, whatever length a request to it declares.
    const stray = await sendRaw(`GET /.well-known/nothing-here HTTP/1.1\r\nHost: localhost\r\nContent-Length: ${10 * 1024 * 1024}\r\n\r\n`);
    await until(() => stray.text().includes('\r\n\r\n'));
    expect(stray.text()).toMatch(/^HTTP\/1\.1 404 /);
    stray.socket.destroy();
  });

  it('lets one organization in one mode hold at most its share, so that it cannot take the whole budget from the others', async () => {
    // A caller that sends an upload's headers and none of its body holds its reservation until the read timeout.
    // The default share is half the budget, and at least one upload of the largest size: here 64 KiB of 100.
    const held = await s.holdUpload('chunked');
    try {
      // Its own next upload, however small, is over its share.
      const more = await s.call('POST', '/api/v1/documents?name=more.pdf', { raw: { bytes: new Uint8Array(1000).fill(0x41), contentType: 'application/pdf' } });
      expect(more.status).toBe(503);
      expect(more.body.code).toBe('server_busy');
      // Another organization, and the same organization's live mode, still upload (a body that is no PDF: read, 422).
      for (const key of [await s.newKey('other-org', 'test'), await s.newKey('default', 'live')]) {
        const r = await s.call('POST', '/api/v1/documents?name=other.pdf', { key, raw: { bytes: new Uint8Array(30_000).fill(0x41), contentType: 'application/pdf' } });
        expect(r.status).toBe(422);
      }
    } finally {
      expect(await held.finish()).toMatch(/^HTTP\/1\.1 422 /);
    }
  });

  it('refuses a budget smaller than one upload of the largest size when it starts', async () => {
    await expect(startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(1024) })).rejects.toThrow(
      /ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT/,
    );
    for (const share of [String(1024), String(200 * 1024)])
      await expect(
        startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT: String(100 * 1024), ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT_PER_TENANT: share }),
      ).rejects.toThrow(/ESIG_MAX_UPLOAD_BYTES_IN_FLIGHT_PER_TENANT/);
  });
});
