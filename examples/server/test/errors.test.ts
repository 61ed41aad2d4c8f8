import { connect } from 'node:net';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Stores } from '@esig/core';
import { storeFailure } from '@esig/core';
import { T } from '../src/tokens.js';
import { makeEmptyPdf, makeEncryptedPdf, makePdf } from '@esig/testkit/pdf';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_MAX_UPLOAD_BYTES: String(64 * 1024) });
});
afterAll(async () => s.close());

const expectProblem = (r: { status: number; headers: Headers; body: any }, status: number, code: string) => {
  expect(r.status).toBe(status);
  expect(r.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(Object.keys(r.body).filter((k) => k !== 'errors').sort()).toEqual(['code', 'detail', 'requestId', 'status', 'title', 'type']);
  expect(r.body).toMatchObject({ status, code, requestId: r.headers.get('x-request-id') });
  expect(JSON.stringify(r.body)).not.toMatch(/at .*\.ts:\d+|Error:|SQLITE/);
};

describe('problem+json errors', () => {
  it('400 on a body that fails validation, naming every path', async () => {
    const r = await s.call('POST', '/api/v1/signature-requests', { body: { title: 42, documentIds: ['nope'], surprise: true } });
    expectProblem(r, 400, 'validation_failed');
    const paths = r.body.errors.map((e: { path: string }) => e.path).sort();
    expect(paths).toEqual(['surprise']);
    const r2 = await s.call('POST', '/api/v1/signature-requests', { body: { title: 42, documentIds: ['nope'] } });
    expect(r2.body.errors.map((e: { path: string }) => e.path).sort()).toEqual(['documentIds.0', 'title']);
  });

  it('400 on malformed JSON, on a non-object body and on a bad path id', async () => {
    expectProblem(await s.call('POST', '/api/v1/signature-requests', { body: '{"title": ' }), 400, 'validation_failed');
    expectProblem(await s.call('POST', '/api/v1/signature-requests', { body: '[1,2]' }), 400, 'validation_failed');
    expectProblem(await s.call('POST', '/api/v1/signature-requests', { body: '"text"' }), 400, 'validation_failed');
    expectProblem(await s.call('GET', '/api/v1/signature-requests/req_bad'), 400, 'validation_failed');
  });

  it('a body that is JSON but not an object is told so, whether or not the parser takes it', async () => {
    for (const body of ['null', '5', '"text"', '[1,2]', 'true']) {
      const r = await s.call('POST', '/api/v1/signature-requests', { body });
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.detail, body).toBe('The body must be a JSON object.');
    }
    expect((await s.call('POST', '/api/v1/signature-requests', { body: '{"title": ' })).body.detail).toBe('The body is not valid JSON.');
  });

  it('an upload announced as a PDF with no body at all is told the file is missing, not that its type is wrong', async () => {
    // As `curl -X POST -H 'Content-Type: application/pdf'` sends it: neither Content-Length nor Transfer-Encoding.
    const { hostname, port } = new URL(s.url);
    const answer = await new Promise<string>((resolve, reject) => {
      const socket = connect(Number(port), hostname, () =>
        socket.end(`POST /api/v1/documents?name=a.pdf HTTP/1.1\r\nHost: ${hostname}\r\nAuthorization: Bearer ${s.key}\r\nContent-Type: application/pdf\r\nConnection: close\r\n\r\n`),
      );
      let text = '';
      socket.on('data', (b) => (text += b.toString('utf8')));
      socket.on('end', () => resolve(text));
      socket.on('error', reject);
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400 /);
    expect(answer).toContain('"code":"validation_failed"');
  });

  it('a path parameter that is not valid percent-encoding is named as such, not as a body that could not be read', async () => {
    for (const path of ['/api/v1/documents/%E0%A4%A', `/api/v1/signing/tok%FF/view`]) {
      const r = await s.call(path.endsWith('/view') ? 'POST' : 'GET', path);
      expectProblem(r, 400, 'validation_failed');
      expect(r.body.detail, path).toBe('The URL path is not valid percent-encoding.');
    }
  });

  it('a 500 from a store failure logs its cause beside the requestId, and tells the client nothing of it', async () => {
    const doc = await s.uploadPdf();
    const stores = s.container.resolve<Stores>(T.Stores);
    const logger = s.container.resolve(T.Logger);
    const errors = vi.spyOn(logger, 'error');
    const findById = stores.documents.findById;
    stores.documents.findById = () => TE.left(storeFailure(new Error('the disk is on fire')));
    let r;
    try {
      r = await s.call('GET', `/api/v1/documents/${doc.id}`);
    } finally {
      stores.documents.findById = findById;
    }
    expectProblem(r, 500, 'internal');
    expect(r.text).not.toContain('fire');
    const requestId = r.headers.get('x-request-id');
    // The line is written when the response has finished, a turn or more after the client has it.
    for (const end = Date.now() + 10_000; errors.mock.calls.length === 0 && Date.now() < end; ) await new Promise((ok) => setTimeout(ok, 10));
    const logged = errors.mock.calls.map(([fields]) => fields);
    errors.mockRestore();
    expect(logged).toContainEqual(expect.objectContaining({ requestId, err: expect.objectContaining({ message: 'the disk is on fire' }) }));
  });

  /** Sends `text` as it is on a connection of its own, and reads what comes back until the server closes it. */
  const raw = (text: string) =>
    new Promise<string>((resolve, reject) => {
      const { hostname, port } = new URL(s.url);
      const socket = connect(Number(port), hostname, () => socket.write(text));
      let answer = '';
      socket.on('data', (b) => (answer += b.toString('utf8')));
      socket.on('end', () => resolve(answer));
      socket.on('close', () => resolve(answer));
      socket.on('error', reject);
    });

  it('a request Node’s HTTP parser refuses is answered as problem+json with a request id, not an empty 400 or 431', async () => {
    const { hostname } = new URL(s.url);
    for (const request of [
      `FOO / HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`,
      `GET /api/v1/documents?cursor=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`,
      `POST /api/v1/documents HTTP/1.1\r\nHost: ${hostname}\r\nContent-Length: -1\r\n\r\n`,
    ]) {
      const answer = await raw(request);
      const [head, body] = answer.split('\r\n\r\n');
      expect(head, request.slice(0, 40)).toMatch(/^HTTP\/1\.1 400 /);
      expect(head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
      const id = /\r\nx-request-id: (\S+)/i.exec(head!)?.[1];
      expect(JSON.parse(body!)).toMatchObject({ status: 400, code: 'validation_failed', requestId: id });
    }
  });

  it('CONNECT, which no route serves, is answered as problem+json too, not by a closed connection', async () => {
    const answer = await raw(`CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n`);
    const [head, body] = answer.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 400 /);
    expect(head).toMatch(/\r\ncontent-type: application\/problem\+json/i);
    expect(JSON.parse(body!)).toMatchObject({ status: 400, code: 'validation_failed', detail: 'The CONNECT method is not supported.', requestId: /\r\nx-request-id: (\S+)/i.exec(head!)?.[1] });
  });

  it('an expectation the server does not know (Expect: other than 100-continue) is ignored, not a bare 417', async () => {
    const { hostname } = new URL(s.url);
    const answer = await raw(`GET /healthz HTTP/1.1\r\nHost: ${hostname}\r\nExpect: banana\r\nConnection: close\r\n\r\n`);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
  });

  it('404 for an absent resource and for an unknown route', async () => {
    expectProblem(await s.call('GET', `/api/v1/documents/doc_${'0'.repeat(26)}`), 404, 'not_found');
    expectProblem(await s.call('GET', '/api/v1/nothing-here'), 404, 'not_found');
  });

  it('413 when a body is too large', async () => {
    const big = await s.call('POST', `/api/v1/documents?name=big.pdf`, { raw: { bytes: new Uint8Array(65 * 1024).fill(37), contentType: 'application/pdf' } });
    expectProblem(big, 413, 'payload_too_large');
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(70 * 1024)]), 'big.pdf');
    form.set('name', 'big.pdf');
    expectProblem(await s.call('POST', '/api/v1/documents', { form }), 413, 'payload_too_large');
    const json = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'x'.repeat(1_100_000), documentIds: [] } });
    expectProblem(json, 413, 'payload_too_large');
  });

  it('415 for the wrong Content-Type', async () => {
    expectProblem(await s.call('POST', '/api/v1/signature-requests', { raw: { bytes: 'title=x', contentType: 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectProblem(await s.call('POST', '/api/v1/documents?name=a.pdf', { body: { file: 'x' } }), 415, 'unsupported_media_type');
    expectProblem(await s.call('POST', '/api/v1/documents?name=a.pdf', { raw: { bytes: 'x', contentType: 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it.each([
    ['garbage', async () => new TextEncoder().encode('not a pdf')],
    ['an encrypted PDF', makeEncryptedPdf],
    ['a PDF without pages', makeEmptyPdf],
    ['a truncated PDF', async () => (await makePdf(3)).subarray(0, 300)],
  ])('422 invalid_document for %s, and nothing is stored', async (_n, make) => {
    const before = (await s.call('GET', '/api/v1/documents?limit=100')).body.data.length;
    expectProblem(await s.call('POST', '/api/v1/documents?name=x.pdf', { raw: { bytes: await make(), contentType: 'application/pdf' } }), 422, 'invalid_document');
    expect((await s.call('GET', '/api/v1/documents?limit=100')).body.data.length).toBe(before);
  });

  it('400 when an upload has no name or no file', async () => {
    expectProblem(await s.call('POST', '/api/v1/documents', { raw: { bytes: await makePdf(1), contentType: 'application/pdf' } }), 400, 'validation_failed');
    const form = new FormData();
    form.set('name', 'x.pdf');
    expectProblem(await s.call('POST', '/api/v1/documents', { form }), 400, 'validation_failed');
  });
});
