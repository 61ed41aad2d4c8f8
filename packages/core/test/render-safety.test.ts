import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { Document, FieldType, PageSize, PdfInspector, Principal, StampPreflight } from '@esig/core';
import {
  addField,
  addRecipient,
  boxFitsPage,
  createSignatureRequest,
  execute,
  inspectUpload,
  sendSignatureRequest,
  signAsRecipient,
  uploadDocument,
} from '@esig/core';
import { fakePdfInspector, fakeStampPreflight } from '@esig/testkit';
import { drawnSignatureDataUrl, hostileDrawnSignatures } from '@esig/testkit/png';
import { harness, left, principal, right } from './support.js';

const LETTER: PageSize = { width: 612, height: 792 };
const SMALL: PageSize = { width: 300, height: 400 };
const CLIENT = { ip: '198.51.100.7', userAgent: 'test' };

/** A harness whose uploads have a Letter page and a 300 × 400 page, wired for the use cases below. */
const world = (o: { pdf?: PdfInspector; stamps?: StampPreflight; maxPagesPerRequest?: number } = {}) => {
  const h = harness();
  const stamps = o.stamps ?? fakeStampPreflight();
  const deps = { ...h, pdf: o.pdf ?? fakePdfInspector([LETTER, SMALL]), stamps, pageLimits: { maxPagesPerDocument: 10, maxPagesPerRequest: o.maxPagesPerRequest ?? 20 } };
  const run = execute(deps);
  const p: Principal = principal(['*']);
  const upload = () => pipe(inspectUpload(deps)(p, new Uint8Array(4)), TE.chainW((pdf) => run(uploadDocument(deps)(p, { name: 'c.pdf', pdf }))));
  return { h, deps, run, p, upload };
};

type World = ReturnType<typeof world>;

/** A sent request with one signer and a signature, a text, a date and an optional initials field; and the signer's token. */
const sent = async (w: World) => {
  const doc = await right(w.upload());
  const req = await right(w.run(createSignatureRequest(w.deps)(w.p, { title: 'Lease', documentIds: [doc.id] })));
  const rcp = await right(w.run(addRecipient(w.deps)(w.p, req.id, { email: 'ana@example.com', firstName: 'Ana', lastName: 'M' })));
  const field = (type: FieldType, y: number, required = true) =>
    right(w.run(addField(w.deps)(w.p, req.id, { documentId: doc.id, recipientId: rcp.id, type, page: 1, x: 72, y, width: 200, height: 30, required })));
  const fields = { signature: await field('signature', 100), text: await field('text', 200), date: await field('date_signed', 300), initials: await field('initials', 400, false) };
  await right(w.run(sendSignatureRequest(w.deps)(w.p, req.id)));
  const token = 'T'.repeat(43);
  await right(
    w.h.uow.transaction((tx) =>
      tx.signingLinks.insert({ tokenHash: w.h.crypto.sha256Hex(token), orgId: w.p.tenant.orgId, mode: w.p.tenant.mode, requestId: req.id, recipientId: rcp.id, createdAt: '2026-01-01T00:00:00.000Z', expiresAt: null }),
    ),
  );
  const nothingRecorded = async () => {
    const now = (await right(w.h.stores.signatureRequests.findById(w.p.tenant, req.id)))!;
    expect(now.status).toBe('SENT');
    expect(now.recipients[0]!.status).not.toBe('SIGNED');
    expect((await right(w.h.stores.evidence.listForRequest(w.p.tenant, req.id))).map((e) => e.action)).not.toContain('signed');
  };
  return { doc, req, rcp, fields, token, nothingRecorded };
};

describe('signAsRecipient refuses what the seal could not stamp, before recording anything', () => {
  it('refuses undrawable text and oversized drawn signatures by the cheap checks alone', async () => {
    const stamps = fakeStampPreflight();
    const w = world({ stamps });
    const s = await sent(w);
    const cases: [object, string][] = [
      [{ values: { [s.fields.text.id]: 'x' }, signature: { kind: 'typed', value: 'Ana\u0000M' } }, 'signature.value'],
      [{ values: { [s.fields.text.id]: 'x' }, signature: { kind: 'typed', value: 'Ana \ud800' } }, 'signature.value'],
      [{ values: { [s.fields.text.id]: 'x' }, signature: { kind: 'drawn', value: hostileDrawnSignatures()['declares 12,000 × 12,000 pixels']! } }, 'signature.value'],
      [{ values: { [s.fields.text.id]: 'x\u0007' }, signature: { kind: 'typed', value: 'Ana' } }, `values.${s.fields.text.id}`],
      [{ values: { [s.fields.text.id]: 'x', [s.fields.initials.id]: '\uffff' }, signature: { kind: 'typed', value: 'Ana' } }, `values.${s.fields.initials.id}`],
    ];
    for (const [input, path] of cases) {
      const e = await left(signAsRecipient(w.deps)(s.token, input as never, CLIENT));
      expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path }] });
    }
    // Refused before the renderer was asked, and before any transaction.
    expect(stamps.calls).toEqual([]);
    await s.nothingRecorded();
    // An unknown link is not found, whatever the body: the token is resolved first.
    expect(await left(signAsRecipient(w.deps)('U'.repeat(43), cases[0]![0] as never, CLIENT))).toMatchObject({ _tag: 'NotFound' });
  });

  it('asks the preflight about exactly what the seal will stamp: the signature and this signer’s fields as signed', async () => {
    const stamps = fakeStampPreflight();
    const w = world({ stamps });
    const s = await sent(w);
    const signature = { kind: 'drawn' as const, value: drawnSignatureDataUrl(60, 20) };
    const view = await right(signAsRecipient(w.deps)(s.token, { values: { [s.fields.text.id]: 'Ref 1', [s.fields.initials.id]: true }, signature }, CLIENT));
    expect(view.everyoneSigned).toBe(true);
    expect(stamps.calls).toHaveLength(1);
    const asked = stamps.calls[0]!;
    expect(asked.signature).toEqual(signature);
    expect(Object.fromEntries(asked.fields.map((f) => [f.id, f.value]))).toEqual({
      [s.fields.signature.id]: true,
      [s.fields.text.id]: 'Ref 1',
      [s.fields.date.id]: w.h.clock.now().toISOString().slice(0, 10),
      [s.fields.initials.id]: true,
    });
    // What was asked is what was stored for the seal.
    const stored = (await right(w.h.stores.signatureRequests.findById(w.p.tenant, s.req.id)))!;
    expect(asked.fields).toEqual(stored.fields);
  });

  it('turns the preflight’s problems into ValidationFailed with their paths, and records nothing', async () => {
    const w = world({ stamps: fakeStampPreflight((v) => v.includes('UNSTAMPABLE')) });
    const s = await sent(w);
    const e = await left(signAsRecipient(w.deps)(s.token, { values: { [s.fields.text.id]: 'UNSTAMPABLE text' }, signature: { kind: 'typed', value: 'UNSTAMPABLE' } }, CLIENT));
    expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'signature.value' }, { path: `values.${s.fields.text.id}` }] });
    await s.nothingRecorded();
  });

  it('fails (500, nothing recorded) when the preflight cannot run, rather than accept unchecked', async () => {
    const down: StampPreflight = { check: () => TE.left({ _tag: 'RenderFailure', detail: 'worker gone' }) };
    const w = world({ stamps: down });
    const s = await sent(w);
    const e = await left(signAsRecipient(w.deps)(s.token, { values: { [s.fields.text.id]: 'ok' }, signature: { kind: 'typed', value: 'Ana' } }, CLIENT));
    expect(e._tag).toBe('StoreFailure');
    await s.nothingRecorded();
  });

  it('leaves a refused transition to the transaction, without asking the preflight', async () => {
    const stamps = fakeStampPreflight();
    const w = world({ stamps });
    const s = await sent(w);
    const e = await left(signAsRecipient(w.deps)(s.token, { values: {}, signature: { kind: 'typed', value: 'Ana' } }, CLIENT));
    expect(e).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: `values.${s.fields.text.id}` }] });
    expect(stamps.calls).toEqual([]);
  });
});

describe('page limits', () => {
  it('inspectUpload refuses more pages than the limit even when an inspector reports them', async () => {
    const careless: PdfInspector = { inspect: () => TE.right({ pageCount: 11, pageSizes: Array.from({ length: 11 }, () => LETTER) }) };
    const w = world({ pdf: careless });
    expect(await left(inspectUpload(w.deps)(w.p, new Uint8Array(4)))).toEqual({ _tag: 'InvalidDocument', detail: 'The PDF has more than 10 pages, the limit per document.' });
    const unmeasured: PdfInspector = { inspect: () => TE.right({ pageCount: 2, pageSizes: [LETTER] }) };
    expect(await left(inspectUpload({ ...w.deps, pdf: unmeasured })(w.p, new Uint8Array(4)))).toMatchObject({ _tag: 'InvalidDocument' });
  });

  it('inspectUpload passes the per-document limit to the inspector and stores the page sizes', async () => {
    const w = world({ pdf: fakePdfInspector(Array.from({ length: 11 }, () => LETTER)) });
    expect(await left(inspectUpload(w.deps)(w.p, new Uint8Array(4)))).toMatchObject({ _tag: 'InvalidDocument' });
    const ok = world();
    const doc = await right(ok.upload());
    expect((await right(ok.h.stores.documents.findById(ok.p.tenant, doc.id)))!.pageSizes).toEqual([LETTER, SMALL]);
  });

  it('createSignatureRequest refuses documents with more pages together than the request limit', async () => {
    const w = world({ maxPagesPerRequest: 4 });
    const [a, b, c] = [await right(w.upload()), await right(w.upload()), await right(w.upload())];
    expect(await left(w.run(createSignatureRequest(w.deps)(w.p, { title: 't', documentIds: [a.id, b.id, c.id] })))).toMatchObject({
      _tag: 'ValidationFailed',
      errors: [{ path: 'documentIds', message: 'the documents have 6 pages together; a request may have at most 4' }],
    });
    expect((await right(w.run(createSignatureRequest(w.deps)(w.p, { title: 't', documentIds: [a.id, b.id] })))).documentIds).toEqual([a.id, b.id]);
  });
});

describe('addField keeps the box on its page', () => {
  const draft = async (w: World, doc: Document) => {
    const req = await right(w.run(createSignatureRequest(w.deps)(w.p, { title: 'Lease', documentIds: [doc.id] })));
    const rcp = await right(w.run(addRecipient(w.deps)(w.p, req.id, { email: 'ana@example.com', firstName: 'Ana', lastName: 'M' })));
    return (box: { page: number; x: number; y: number; width: number; height: number }) =>
      w.run(addField(w.deps)(w.p, req.id, { documentId: doc.id, recipientId: rcp.id, type: 'text', ...box }))();
  };

  it('accepts a box inside its page and refuses one that leaves it, across random boxes on both pages', async () => {
    const w = world();
    const place = await draft(w, await right(w.upload()));
    const pages = [LETTER, SMALL];
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 2 }),
        fc.double({ min: 0, max: 900, noNaN: true }),
        fc.double({ min: 0, max: 900, noNaN: true }),
        fc.double({ min: 0.01, max: 900, noNaN: true }),
        fc.double({ min: 0.01, max: 900, noNaN: true }),
        async (page, x, y, width, height) => {
          const size = pages[page - 1]!;
          const r = await place({ page, x, y, width, height });
          const inside = x + width <= size.width + 1e-6 && y + height <= size.height + 1e-6;
          expect(E.isRight(r), JSON.stringify({ page, x, y, width, height })).toBe(inside);
          if (E.isLeft(r)) expect(r.left._tag).toBe('ValidationFailed');
        },
      ),
      { numRuns: 150 },
    );
  });

  it('accepts a box that ends exactly at the page edge, whatever the rounding of x + width', async () => {
    const w = world({ pdf: fakePdfInspector([{ width: 595.28, height: 841.89 }]) });
    const place = await draft(w, await right(w.upload()));
    expect(E.isRight(await place({ page: 1, x: 0.1, y: 0.2, width: 595.18, height: 841.69 }))).toBe(true);
    expect(boxFitsPage({ x: 0.1, y: 0.2, width: 0.2, height: 0.1 }, { width: 0.3, height: 0.3 })).toBe(true);
  });

  it('leaves documents stored before page sizes were recorded unchecked (beyond their page count)', async () => {
    const w = world();
    const legacy = { ...(await right(w.upload())), pageSizes: null };
    const other: Document = { ...legacy, id: 'doc_legacy0000000000000000000' };
    await right(w.h.uow.transaction((tx) => tx.documents.insert(other)));
    const place = await draft(w, other);
    expect(E.isRight(await place({ page: 1, x: 5000, y: 5000, width: 10, height: 10 }))).toBe(true);
    expect(await place({ page: 3, x: 0, y: 0, width: 10, height: 10 })).toMatchObject({ left: { _tag: 'ValidationFailed', errors: [{ path: 'page' }] } });
  });
});
