import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PDFDocument } from 'pdf-lib';
import { makePdf } from '@esig/testkit/pdf';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  // The API flow alone. With workers running, the invitation job would mark the signer NOTIFIED and add
  // `signer.notified` at a moment of its own choosing (sooner or later than these checks, depending on how
  // busy the machine is); the background work is tested where the tests wait for it (signing, crash tests).
  s = await startTestServer({ ESIG_WORKERS: 'none' });
});
afterAll(async () => s.close());

describe('the README flow: upload, create, recipient, fields, send', () => {
  it('works end to end and records the outbox events', async () => {
    const pdf = await makePdf(3);
    const up = await s.call('POST', '/api/v1/documents?name=Lease%20agreement.pdf', { raw: { bytes: pdf, contentType: 'application/pdf' } });
    expect(up.status).toBe(201);
    expect(up.body).toMatchObject({ name: 'Lease agreement.pdf', status: 'UPLOADED', pageCount: 3, sizeBytes: pdf.byteLength, signatureRequestId: null, testMode: true });
    expect(up.body.id).toMatch(/^doc_[0-9A-Z]{26}$/);
    expect(up.body.sha256).toMatch(/^[0-9a-f]{64}$/);

    const content = await fetch(`${s.url}/api/v1/documents/${up.body.id}/content`, { headers: { authorization: `Bearer ${s.key}` } });
    expect(content.headers.get('content-type')).toBe('application/pdf');
    expect(new Uint8Array(await content.arrayBuffer())).toEqual(pdf);

    const created = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Lease', documentIds: [up.body.id] } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Lease', status: 'DRAFT', documentIds: [up.body.id], recipients: [], fields: [], signingOrder: 'parallel', requestedSignatureLevel: 'SES', testMode: true, certificateId: null });
    expect(created.body.id).toMatch(/^req_/);
    const reqId = created.body.id;

    const doc = await s.call('GET', `/api/v1/documents/${up.body.id}`);
    expect(doc.body.signatureRequestId).toBe(reqId);

    const rcp = await s.call('POST', `/api/v1/signature-requests/${reqId}/recipients`, { body: { email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper' } });
    expect(rcp.status).toBe(201);
    expect(rcp.body).toMatchObject({ email: 'grace@example.com', firstName: 'Grace', lastName: 'Hopper', role: 'signer', order: 1, authentication: 'none', status: 'PENDING' });
    expect(rcp.body.id).toMatch(/^rcp_/);

    const cc = await s.call('POST', `/api/v1/signature-requests/${reqId}/recipients`, { body: { email: 'legal@example.com', firstName: 'Legal', lastName: 'Team', role: 'cc' } });
    expect(cc.status).toBe(201);

    const badPage = await s.call('POST', `/api/v1/signature-requests/${reqId}/fields`, {
      body: { documentId: up.body.id, recipientId: rcp.body.id, type: 'signature', page: 4, x: 72, y: 600, width: 180, height: 40 },
    });
    expect(badPage.status).toBe(400);
    expect(badPage.body.errors[0].path).toBe('page');

    const ccField = await s.call('POST', `/api/v1/signature-requests/${reqId}/fields`, {
      body: { documentId: up.body.id, recipientId: cc.body.id, type: 'signature', page: 1, x: 72, y: 600, width: 180, height: 40 },
    });
    expect(ccField.status).toBe(400);

    // Sending without a signature field for the signer is refused.
    const early = await s.call('POST', `/api/v1/signature-requests/${reqId}/send`, { body: {} });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('invalid_state');

    for (const f of [
      { type: 'signature', page: 3, x: 72, y: 650, width: 180, height: 40 },
      { type: 'date_signed', page: 3, x: 300, y: 650, width: 100, height: 20 },
      { type: 'text', page: 1, x: 72, y: 100, width: 200, height: 20, required: false },
    ]) {
      const r = await s.call('POST', `/api/v1/signature-requests/${reqId}/fields`, { body: { documentId: up.body.id, recipientId: rcp.body.id, ...f } });
      expect(r.status).toBe(201);
      expect(r.body).toMatchObject({ ...f, required: f.required ?? true, value: null });
    }

    const sent = await s.call('POST', `/api/v1/signature-requests/${reqId}/send`, { body: {} });
    expect(sent.status).toBe(200);
    expect(sent.body.status).toBe('SENT');
    expect(sent.body.sentAt).toMatch(/Z$/);
    expect(sent.body.fields).toHaveLength(3);
    expect(sent.body.recipients).toHaveLength(2);

    // After sending: the document is PENDING, changes are refused, a second send is refused.
    expect((await s.call('GET', `/api/v1/documents/${up.body.id}`)).body.status).toBe('PENDING');
    const late = await s.call('POST', `/api/v1/signature-requests/${reqId}/recipients`, { body: { email: 'x@example.com', firstName: 'X', lastName: 'Y' } });
    expect(late.status).toBe(409);
    expect((await s.call('POST', `/api/v1/signature-requests/${reqId}/send`)).status).toBe(409);

    // The in-process worker may have mailed the invitation since: only the signer's status can have moved on.
    const got = await s.call('GET', `/api/v1/signature-requests/${reqId}`);
    const statusless = (r: { recipients: Array<{ status: string }> }) => ({ ...r, recipients: r.recipients.map((x) => ({ ...x, status: undefined })) });
    expect(statusless(got.body)).toEqual(statusless(sent.body));
    expect(['PENDING', 'NOTIFIED']).toContain(got.body.recipients[0].status);

    const events = await s.call('GET', '/api/v1/events?order=asc');
    // The request's own events, and at most the worker's invitation notice if it went out meanwhile.
    const types: string[] = events.body.data.map((e: { type: string }) => e.type);
    expect(types.filter((t) => t !== 'signer.notified')).toEqual(['document.created', 'request.sent']);
    expect(types.filter((t) => t === 'signer.notified').length).toBeLessThanOrEqual(1);
    const sentEvent = events.body.data.find((e: { type: string }) => e.type === 'request.sent');
    expect(sentEvent.data).toMatchObject({ request_id: reqId, status: 'SENT', document_ids: [up.body.id] });
    // Events carry identifiers, states, digests and times only: no names or addresses.
    expect(JSON.stringify(events.body)).not.toMatch(/grace|Hopper|Lease/i);
  });

  it('accepts multipart uploads with a name field', async () => {
    const form = new FormData();
    form.set('name', 'From a form.pdf');
    form.set('file', new Blob([await makePdf(2)], { type: 'application/pdf' }), 'ignored.pdf');
    const r = await s.call('POST', '/api/v1/documents', { form });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ name: 'From a form.pdf', pageCount: 2 });
    const saved = await fetch(`${s.url}/api/v1/documents/${r.body.id}/content`, { headers: { authorization: `Bearer ${s.key}` } });
    expect((await PDFDocument.load(await saved.arrayBuffer())).getPageCount()).toBe(2);
  });

  it('cancels a draft and a sent request, and marks their documents', async () => {
    const a = await s.draftReady();
    const cancelled = await s.call('POST', `/api/v1/signature-requests/${a.req.id}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body).toMatchObject({ status: 'CANCELLED' });
    expect((await s.call('GET', `/api/v1/documents/${a.doc.id}`)).body.status).toBe('CANCELLED');
    expect((await s.call('POST', `/api/v1/signature-requests/${a.req.id}/cancel`)).status).toBe(409);

    const b = await s.draftReady();
    expect((await s.call('POST', `/api/v1/signature-requests/${b.req.id}/send`)).status).toBe(200);
    expect((await s.call('POST', `/api/v1/signature-requests/${b.req.id}/cancel`)).body.status).toBe('CANCELLED');
  });

  it('refuses a document that already belongs to a request', async () => {
    const a = await s.draftReady();
    const again = await s.call('POST', '/api/v1/signature-requests', { body: { title: 'Again', documentIds: [a.doc.id] } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('invalid_state');
  });

  it('filters lists by status', async () => {
    const sent = await s.draftReady();
    await s.call('POST', `/api/v1/signature-requests/${sent.req.id}/send`);
    const list = await s.call('GET', '/api/v1/signature-requests?status=SENT&limit=100');
    expect(list.status).toBe(200);
    expect(list.body.data.length).toBeGreaterThan(0);
    expect(list.body.data.every((r: { status: string }) => r.status === 'SENT')).toBe(true);
    const docs = await s.call('GET', '/api/v1/documents?status=UPLOADED&limit=100');
    expect(docs.body.data.every((d: { status: string }) => d.status === 'UPLOADED')).toBe(true);
  });

  it('has no test mailbox for a live key, and says why', async () => {
    const live = await s.newKey('default', 'live', ['*']);
    const r = await s.call('GET', '/api/v1/test-mailbox', { key: live });
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ code: 'not_found', detail: 'No test mailbox in live mode.' });
  });

  it('serves health, readiness and the OpenAPI document without a key', async () => {
    expect((await s.call('GET', '/healthz', { key: null })).body).toEqual({ status: 'ok' });
    expect((await s.call('GET', '/readyz', { key: null })).body).toEqual({ status: 'ready' });
    const spec = await s.call('GET', '/api/v1/openapi.json', { key: null });
    expect(spec.status).toBe(200);
    expect(spec.body.openapi).toBe('3.1.0');
  });
});
