import * as TE from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { describe, expect, it } from 'vitest';
import type { Principal } from '@esig/core';
import { addField, addRecipient, createSignatureRequest, execute, inspectUpload, issueSigningLink, openSigningLink, sendSignatureRequest, uploadDocument } from '@esig/core';
import { fakePdfInspector, fakeStampPreflight } from '@esig/testkit';
import { OTHER_TENANTS } from './arbitraries.js';
import { harness, left, principal, right } from './support.js';

const CLIENT = { ip: null, userAgent: null };

const world = async (opts: { send?: boolean } = {}) => {
  const h = harness();
  const deps = { ...h, pdf: fakePdfInspector(), stamps: fakeStampPreflight(), pageLimits: { maxPagesPerDocument: 10, maxPagesPerRequest: 20 } };
  const run = execute(deps);
  const p = principal(['*']);
  const doc = await right(pipe(inspectUpload(deps)(p, new Uint8Array(4)), TE.chainW((pdf) => run(uploadDocument(deps)(p, { name: 'c.pdf', pdf })))));
  const req = await right(run(createSignatureRequest(deps)(p, { title: 'Lease', documentIds: [doc.id] })));
  const ana = await right(run(addRecipient(deps)(p, req.id, { email: 'ana@example.com', firstName: 'Ana', lastName: 'M' })));
  const cc = await right(run(addRecipient(deps)(p, req.id, { email: 'cc@example.com', firstName: 'C', lastName: 'C', role: 'cc' })));
  await right(run(addField(deps)(p, req.id, { documentId: doc.id, recipientId: ana.id, type: 'signature', page: 1, x: 72, y: 100, width: 200, height: 30 })));
  if (opts.send !== false) await right(run(sendSignatureRequest(deps)(p, req.id)));
  const issue = (who: Principal, recipientId: string) => run(issueSigningLink(deps)(who, req.id, recipientId));
  return { h, deps, p, req, ana, cc, issue };
};

describe('issueSigningLink', () => {
  it('returns a token that opens the signer’s view, and stores only its hash; each call is a new link', async () => {
    const w = await world();
    const a = await right(w.issue(w.p, w.ana.id));
    const b = await right(w.issue(w.p, w.ana.id));
    expect(a.token).toMatch(/^[A-Za-z0-9]{43}$/);
    expect(b.token).not.toBe(a.token);
    for (const t of [a, b]) {
      const view = await right(openSigningLink(w.deps)(t.token, CLIENT));
      expect([view.request.id, view.recipient.id]).toEqual([w.req.id, w.ana.id]);
    }
    const stored = await right(w.h.stores.signingLinks.findByTokenHash(w.h.crypto.sha256Hex(a.token)));
    expect(stored).toMatchObject({ requestId: w.req.id, recipientId: w.ana.id, expiresAt: null });
    expect(JSON.stringify(stored)).not.toContain(a.token);
  });

  it('refuses a draft and a cc recipient; another tenant finds nothing; the scope is required', async () => {
    const draft = await world({ send: false });
    expect(await left(draft.issue(draft.p, draft.ana.id))).toMatchObject({ _tag: 'InvalidState' });
    const w = await world();
    expect(await left(w.issue(w.p, w.cc.id))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(w.issue(w.p, 'rcp_unknown'))).toMatchObject({ _tag: 'NotFound' });
    for (const t of OTHER_TENANTS) expect(await left(w.issue(principal(['*'], t), w.ana.id))).toMatchObject({ _tag: 'NotFound' });
    expect(await left(w.issue(principal(['signature_requests:read']), w.ana.id))).toEqual({ _tag: 'InsufficientScope', scope: 'signature_requests:write' });
  });
});

describe('inspectUpload and the file’s SHA-256', () => {
  const bytes = Uint8Array.from([37, 80, 68, 70, 45, 49]);
  const withHash = (sha256: string) => ({ inspect: (b: Uint8Array, l: { maxPages: number }) => pipe(fakePdfInspector().inspect(b, l), TE.map((f) => ({ ...f, sha256 }))) });
  const inspected = async (pdf: ReturnType<typeof withHash> | ReturnType<typeof fakePdfInspector>) => {
    const h = harness();
    let hashed = 0;
    const crypto = { ...h.crypto, sha256Hex: (b: Uint8Array | string) => (hashed++, h.crypto.sha256Hex(b)) };
    const pdfFacts = await right(inspectUpload({ ...h, crypto, pdf, pageLimits: { maxPagesPerDocument: 10, maxPagesPerRequest: 20 } })(principal(['*']), bytes));
    return { sha256: pdfFacts.sha256, hashed, real: h.crypto.sha256Hex(bytes) };
  };

  it('takes the hash the inspector computed where it read the file, and computes none on this thread', async () => {
    const real = harness().crypto.sha256Hex(bytes);
    expect(await inspected(withHash(real))).toEqual({ sha256: real, hashed: 0, real });
  });

  it('computes it when the inspector gives none, or one that is not 64 lower-case hex digits', async () => {
    for (const pdf of [fakePdfInspector(), withHash('ABC'), withHash('A'.repeat(64))]) {
      const r = await inspected(pdf);
      expect(r.sha256).toBe(r.real);
      expect(r.hashed).toBe(1);
    }
  });
});
