import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCyclicPageTreePdf, makePdf, makePdfWithPages, makeRepeatedPagePdf } from '@esig/testkit/pdf';
import { drawnSignatureDataUrl, encodePng, hostileDrawnSignatures } from '@esig/testkit/png';
import { T } from '../src/tokens.js';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

/**
 * The security review's findings against PDF and image handling, each as the attacker played it: every
 * input here used to be accepted and then either made a completed request unsealable for ever, or held
 * the API's event loop for seconds.
 */
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_WORKER_POLL_MS: '50' });
});
afterAll(async () => {
  await s.close();
});

const waitFor = async <T>(probe: () => Promise<T | undefined>, what: string, ms = 30_000): Promise<T> => {
  for (const until = Date.now() + ms; ; await new Promise((r) => setTimeout(r, 50))) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
  }
};

const upload = (bytes: Uint8Array, server: TestServer = s) =>
  server.call('POST', '/api/v1/documents?name=doc.pdf', { raw: { bytes, contentType: 'application/pdf' } });

let n = 0;
/** Uploads `pdf`, drafts a request with one signer and the fields `fields` gives, sends it, and returns the signer's link. */
const sentRequest = async (pdf: Uint8Array, fields: (documentId: string, recipientId: string) => object[]) => {
  const doc = await upload(pdf);
  expect(doc.status).toBe(201);
  const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Agreement', documentIds: [doc.body.id] } })).body;
  const email = `signer${++n}.${req.id.slice(-6).toLowerCase()}@example.com`;
  const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email, firstName: 'Ada', lastName: 'Lovelace' } })).body;
  const added = [];
  for (const f of fields(doc.body.id, rcp.id)) {
    const r = await s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: f });
    expect(r.status, r.text).toBe(201);
    added.push(r.body);
  }
  expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  const token = await waitFor(async () => {
    const mail = (await s.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(email)}&limit=100`)).body.data;
    return mail.map((m: { text: string }) => /\/sign\/([A-Za-z0-9]+)/.exec(m.text)?.[1]).find(Boolean) as string | undefined;
  }, 'the invitation');
  return { doc: doc.body, req, rcp, fields: added, token };
};

const sign = (token: string, body: unknown) => s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body });
const sealed = (requestId: string) =>
  waitFor(async () => {
    const r = await s.call('GET', `/api/v1/signature-requests/${requestId}/document`);
    return r.status === 200 ? r : undefined;
  }, 'the sealed document');
const box = (documentId: string, recipientId: string, type: string, over: object = {}) => ({ documentId, recipientId, type, page: 1, x: 72, y: 100, width: 200, height: 40, required: false, ...over });

describe('signing refuses what the seal could not stamp, and the request stays open (findings 1 and 3)', () => {
  it('refuses broken or oversized drawn signatures, undrawable typed signatures and values; then a good signature seals', async () => {
    const p = await sentRequest(await makePdf(1), (d, r) => [
      box(d, r, 'signature', { required: true }),
      box(d, r, 'initials', { y: 200 }),
      box(d, r, 'text', { y: 300 }),
      box(d, r, 'name', { y: 400 }),
    ]);
    const [, initials, text, name] = p.fields;
    const refusals: [string, unknown, string][] = [
      ...Object.entries(hostileDrawnSignatures()).map(([what, value]): [string, unknown, string] => [
        `a drawn signature that ${what}`,
        { values: {}, signature: { kind: 'drawn', value } },
        'signature.value',
      ]),
      ['a typed signature with NUL', { values: {}, signature: { kind: 'typed', value: 'Ada\u0000Lovelace' } }, 'signature.value'],
      ['a typed signature with an escape character', { values: {}, signature: { kind: 'typed', value: 'Ada \u001b[31m' } }, 'signature.value'],
      ['a typed signature with a lone surrogate', { values: {}, signature: { kind: 'typed', value: 'Ada \ud800' } }, 'signature.value'],
      ['a typed signature with a noncharacter', { values: {}, signature: { kind: 'typed', value: 'Ada \uffff' } }, 'signature.value'],
      ['initials with NUL', { values: { [initials.id]: 'A\u0000L' }, signature: { kind: 'typed', value: 'Ada' } }, `values.${initials.id}`],
      ['a text value with a bell', { values: { [text.id]: 'Ref \u0007 4711' }, signature: { kind: 'typed', value: 'Ada' } }, `values.${text.id}`],
      ['a name value with a lone surrogate', { values: { [name.id]: '\udc00Ada' }, signature: { kind: 'typed', value: 'Ada' } }, `values.${name.id}`],
    ];
    for (const [what, body, path] of refusals) {
      const r = await sign(p.token, body);
      expect(r.status, what).toBe(400);
      expect(r.body.code, what).toBe('validation_failed');
      expect(r.body.errors.map((e: { path: string }) => e.path), what).toEqual([path]);
    }
    const still = (await s.call('GET', `/api/v1/signature-requests/${p.req.id}`)).body;
    expect(still.status).toBe('SENT');
    expect(still.recipients[0].status).not.toBe('SIGNED');

    // Tabs and line breaks are fine (drawn as spaces), as is any drawable text; the seal then succeeds.
    const ok = await sign(p.token, {
      values: { [initials.id]: 'AL', [text.id]: 'Ref\t4711\nline two', [name.id]: 'Zoë Ünal 東京' },
      signature: { kind: 'drawn', value: drawnSignatureDataUrl(600, 200) },
    });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.everyoneSigned).toBe(true);
    const finished = await sealed(p.req.id);
    expect(finished.headers.get('content-type')).toBe('application/pdf');
    expect((await s.call('GET', `/api/v1/signature-requests/${p.req.id}/certificate`)).status).toBe(200);
  }, 60_000);
});

describe('page trees and page limits (finding 2)', () => {
  it('refuses, at upload, a 120 KB tree naming one page 20,000 times, and a tree that contains itself', async () => {
    const repeated = await makeRepeatedPagePdf(20_000);
    expect(repeated.length).toBeLessThan(200_000);
    for (const bytes of [repeated, await makeCyclicPageTreePdf()]) {
      const r = await upload(bytes);
      expect(r.status).toBe(422);
      expect(r.body).toMatchObject({ code: 'invalid_document', detail: 'The PDF’s page tree lists the same page more than once.' });
    }
  });

  it('caps pages per document at upload (422) and per request at creation (400), as configured', async () => {
    const small = await startTestServer({ ESIG_MAX_PAGES_PER_DOCUMENT: '3', ESIG_MAX_PAGES_PER_REQUEST: '5' });
    try {
      const over = await upload(await makePdf(4), small);
      expect(over.status).toBe(422);
      expect(over.body).toMatchObject({ code: 'invalid_document', detail: 'The PDF has more than 3 pages, the limit per document.' });
      const [a, b, c] = [await upload(await makePdf(3), small), await upload(await makePdf(3), small), await upload(await makePdf(2), small)];
      expect([a.status, b.status, c.status]).toEqual([201, 201, 201]);
      const tooMany = await small.call('POST', '/api/v1/signature-requests', { body: { title: 'Big', documentIds: [a.body.id, b.body.id] } });
      expect(tooMany.status).toBe(400);
      expect(tooMany.body).toMatchObject({ code: 'validation_failed', errors: [{ path: 'documentIds', message: 'the documents have 6 pages together; a request may have at most 5' }] });
      // Refused, the documents stay free for a request within the limit.
      const fits = await small.call('POST', '/api/v1/signature-requests', { body: { title: 'Fits', documentIds: [a.body.id, c.body.id] } });
      expect(fits.status).toBe(201);
    } finally {
      await small.close();
    }
  });

  it('answers /healthz while a heavy seal renders: the work runs on a worker thread', async () => {
    const pool = s.container.resolve(T.PdfPool);
    // Dense noise does not compress: decoding and embedding this signature is real work, stamped 100 times.
    const noise = (x: number, y: number) => (Math.imul(x + 1, 0x9e3779b1) ^ Math.imul(y + 7, 0x85ebca6b)) >>> 0;
    const heavy = `data:image/png;base64,${encodePng(300, 100, noise).toString('base64')}`;
    expect(heavy.length).toBeLessThan(200_000);
    const p = await sentRequest(await makePdf(400), (d, r) => Array.from({ length: 100 }, (_, i) => box(d, r, 'signature', { page: i + 1, required: true })));
    expect(pool.pending()).toBe(0);
    const signed = await sign(p.token, { values: {}, signature: { kind: 'drawn', value: heavy } });
    expect(signed.body.everyoneSigned).toBe(true);
    // The in-process job worker claims the seal job and hands the rendering to the pool.
    await waitFor(async () => (pool.pending() > 0 ? true : undefined), 'the seal to start rendering');
    let answered = 0;
    // Enough answers to show the loop is free, not as many as fit: an unbounded loop on a slow machine would
    // run into the per-address rate limit.
    while (pool.pending() > 0 && answered < 20) {
      const r = await fetch(`${s.url}/healthz`);
      expect(r.status).toBe(200);
      await r.arrayBuffer();
      // Counted only if the render was still in progress once the answer was in.
      if (pool.pending() > 0) answered++;
    }
    expect(answered).toBeGreaterThanOrEqual(5);
    const finished = await sealed(p.req.id);
    expect(finished.status).toBe(200);
  }, 90_000);
});

describe('a page without a MediaBox (finding 4): accepted as US Letter, and sealed as such', () => {
  it('measures it as 612 × 792 at upload, checks fields against that, and seals it with that box', async () => {
    const bytes = await makePdfWithPages([{ size: null }]);
    const p = await sentRequest(bytes, (d, r) => [box(d, r, 'signature', { required: true, x: 412, y: 742, width: 200, height: 50 })]);
    expect(p.doc.pageCount).toBe(1);
    const signed = await sign(p.token, { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } });
    expect(signed.body.everyoneSigned).toBe(true);
    const finished = await sealed(p.req.id);
    const page = (await PDFDocument.load(new Uint8Array(await (await fetch(`${s.url}/api/v1/signature-requests/${p.req.id}/document`, { headers: { authorization: `Bearer ${s.key}` } })).arrayBuffer()))).getPage(0);
    expect(finished.status).toBe(200);
    expect(page.getMediaBox()).toEqual({ x: 0, y: 0, width: 612, height: 792 });
  }, 60_000);
});

describe('fields must lie inside their page (finding 5)', () => {
  it('refuses a box that leaves the page, measured as the page is displayed (crop box, rotation)', async () => {
    const doc = (await upload(await makePdfWithPages([{ size: [612, 792] }, { size: [612, 792], rotate: 90 }, { size: [612, 792], cropBox: [0, 0, 300, 300] }]))).body;
    const req = (await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Bounds', documentIds: [doc.id] } })).body;
    const rcp = (await s.call('POST', `/api/v1/signature-requests/${req.id}/recipients`, { body: { email: 'bounds@example.com', firstName: 'B', lastName: 'C' } })).body;
    const add = (over: object) => s.call('POST', `/api/v1/signature-requests/${req.id}/fields`, { body: box(doc.id, rcp.id, 'text', over) });
    const refused = async (over: object, path: string, message: RegExp) => {
      const r = await add(over);
      expect(r.status, JSON.stringify(over)).toBe(400);
      expect(r.body.code).toBe('validation_failed');
      expect(r.body.errors).toEqual([{ path, message: expect.stringMatching(message) }]);
    };
    // Letter, upright: 612 wide, 792 high.
    expect((await add({ x: 412, y: 752, width: 200, height: 40 })).status).toBe(201);
    await refused({ x: 413, width: 200 }, 'width', /page's width, 612 points/);
    await refused({ x: 612, width: 1 }, 'x', /page's width, 612 points/);
    await refused({ y: 753, height: 40 }, 'height', /page's height, 792 points/);
    await refused({ y: 800, height: 1 }, 'y', /page's height, 792 points/);
    // Turned a quarter: 792 wide, 612 high.
    expect((await add({ page: 2, x: 592, y: 572, width: 200, height: 40 })).status).toBe(201);
    await refused({ page: 2, y: 600, height: 40 }, 'height', /612 points/);
    // Cropped to 300 × 300.
    await refused({ page: 3, x: 200, width: 101 }, 'width', /300 points/);
    const both = await add({ x: 600, y: 790, width: 20, height: 20 });
    expect(both.body.errors.map((e: { path: string }) => e.path)).toEqual(['width', 'height']);
  });
});
