import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { beforeEach, describe, expect, it } from 'vitest';
import type { ApiScope, Command, DomainError, GrantedScope, Principal, SignatureRequest } from '@esig/core';
import {
  API_SCOPES,
  addField,
  addRecipient,
  authenticate,
  bootstrapKey,
  cancelSignatureRequest,
  createApiKey,
  createSignatureRequest,
  execute,
  getDocument,
  getDocumentContent,
  getSignatureRequest,
  inspectUpload,
  listApiKeys,
  listDocuments,
  listEvents,
  listSignatureRequests,
  revokeApiKey,
  sendSignatureRequest,
  uploadDocument,
} from '@esig/core';
import type { Harness } from './support.js';
import { harness, left, principal, right } from './support.js';

const id = <A extends { readonly id: string }>(a: A) => a.id;

/** Everything the use cases need, wired to one harness. */
const wire = (h: Harness) => {
  const run = execute({ uow: h.uow });
  const deps = { clock: h.clock, ids: h.ids, crypto: h.crypto, stores: h.stores, cursors: h.cursors, pdf: h.pdf, pageLimits: h.pageLimits };
  const upload = (p: Principal, name = 'contract.pdf') =>
    pipe(
      inspectUpload(deps)(p, Uint8Array.from([37, 80, 68, 70])),
      TE.chainW((pdf) => run(uploadDocument(deps)(p, { name, pdf }))),
    );
  /** A request with one signer who has a signature field: ready to send. */
  const draft = async (p: Principal) => {
    const doc = await right(upload(p));
    const req = await right(run(createSignatureRequest(deps)(p, { title: 'Lease', documentIds: [doc.id] })));
    const signer = await right(run(addRecipient(deps)(p, req.id, { email: 'ana@example.com', firstName: 'Ana', lastName: 'M' })));
    await right(
      run(addField(deps)(p, req.id, { documentId: doc.id, recipientId: signer.id, type: 'signature', page: 1, x: 1, y: 1, width: 10, height: 10 })),
    );
    return { doc, req, signer };
  };
  const events = async (p: Principal) => (await right(listEvents(deps)(p, { limit: 100 }, {}, (e) => e))).data;
  return { run, deps, upload, draft, events };
};

describe('scopes', () => {
  let h: Harness;
  let w: ReturnType<typeof wire>;
  let admin: Principal;
  let reqId: string;
  let docId: string;
  beforeEach(async () => {
    h = harness();
    w = wire(h);
    admin = principal(['*']);
    const d = await w.draft(admin);
    reqId = d.req.id;
    docId = d.doc.id;
  });

  /** Each use case with the scope it needs; the call is made with a principal holding `scopes`. */
  const cases = (): Array<[ApiScope, (p: Principal) => TE.TaskEither<DomainError, unknown>]> => {
    const { run, deps } = w;
    return [
      ['api_keys:write', (p) => run(createApiKey(deps)(p, { name: 'k', scopes: ['api_keys:write'] }))],
      ['api_keys:write', (p) => listApiKeys(deps)(p, {}, id)],
      ['api_keys:write', (p) => run(revokeApiKey(deps)(p, 'key_unknown'))],
      ['documents:write', (p) => inspectUpload(deps)(p, new Uint8Array(4))],
      ['documents:write', (p) => w.upload(p)],
      ['documents:read', (p) => getDocument(deps)(p, docId)],
      ['documents:read', (p) => getDocumentContent(deps)(p, docId)],
      ['documents:read', (p) => listDocuments(deps)(p, {}, {}, id)],
      ['signature_requests:read', (p) => listEvents(deps)(p, {}, {}, id)],
      ['signature_requests:read', (p) => getSignatureRequest(deps)(p, reqId)],
      ['signature_requests:read', (p) => listSignatureRequests(deps)(p, {}, {}, id)],
      ['signature_requests:write', (p) => run(createSignatureRequest(deps)(p, { title: 't', documentIds: [docId] }))],
      ['signature_requests:write', (p) => run(addRecipient(deps)(p, reqId, { email: 'b@example.com', firstName: 'B', lastName: 'C' }))],
      [
        'signature_requests:write',
        (p) => run(addField(deps)(p, reqId, { documentId: docId, recipientId: 'rcp_x', type: 'text', page: 1, x: 0, y: 0, width: 1, height: 1 })),
      ],
      ['signature_requests:write', (p) => run(sendSignatureRequest(deps)(p, reqId))],
      ['signature_requests:write', (p) => run(cancelSignatureRequest(deps)(p, reqId))],
    ];
  };

  it('every use case refuses a principal without its scope, before looking anything up', async () => {
    for (const [scope, call] of cases()) {
      const others = API_SCOPES.filter((s) => s !== scope);
      for (const scopes of [[], others] as GrantedScope[][])
        expect(await left(call(principal(scopes))), `${scope} with [${scopes.join(',')}]`).toEqual({ _tag: 'InsufficientScope', scope });
    }
    // Nothing was changed by the refused writes.
    expect((await right(getSignatureRequest(w.deps)(admin, reqId))).status).toBe('DRAFT');
    expect((await right(listDocuments(w.deps)(admin, {}, {}, id))).data).toEqual([docId]);
  });

  it('every use case accepts the exact scope alone', async () => {
    for (const [scope, call] of cases()) {
      const r = await call(principal([scope]))();
      if (E.isLeft(r)) expect(r.left._tag, scope).not.toBe('InsufficientScope');
    }
  });
});

describe('tenant isolation', () => {
  it('test keys never see live data, nor one org another org’s, and both get NotFound', async () => {
    const h = harness();
    const w = wire(h);
    const live = principal(['*'], { orgId: 'org_A', mode: 'live' });
    const { doc, req, signer } = await w.draft(live);
    for (const stranger of [principal(['*'], { orgId: 'org_A', mode: 'test' }), principal(['*'], { orgId: 'org_B', mode: 'live' })]) {
      const nf = (resource: string, rid: string) => ({ _tag: 'NotFound', resource, id: rid });
      expect(await left(getDocument(w.deps)(stranger, doc.id))).toEqual(nf('document', doc.id));
      expect(await left(getDocumentContent(w.deps)(stranger, doc.id))).toEqual(nf('document', doc.id));
      expect(await left(getSignatureRequest(w.deps)(stranger, req.id))).toEqual(nf('signature_request', req.id));
      expect(await left(w.run(sendSignatureRequest(w.deps)(stranger, req.id)))).toEqual(nf('signature_request', req.id));
      expect(await left(w.run(cancelSignatureRequest(w.deps)(stranger, req.id)))).toEqual(nf('signature_request', req.id));
      expect(await left(w.run(addRecipient(w.deps)(stranger, req.id, { email: 'x@example.com', firstName: 'X', lastName: 'Y' })))).toEqual(
        nf('signature_request', req.id),
      );
      expect(
        await left(
          w.run(addField(w.deps)(stranger, req.id, { documentId: doc.id, recipientId: signer.id, type: 'text', page: 1, x: 0, y: 0, width: 1, height: 1 })),
        ),
      ).toEqual(nf('signature_request', req.id));
      // Another tenant's document cannot be put into a request.
      expect(await left(w.run(createSignatureRequest(w.deps)(stranger, { title: 't', documentIds: [doc.id] })))).toMatchObject({
        _tag: 'ValidationFailed',
      });
      expect((await right(listDocuments(w.deps)(stranger, {}, {}, id))).data).toEqual([]);
      expect((await right(listSignatureRequests(w.deps)(stranger, {}, {}, id))).data).toEqual([]);
      expect(await w.events(stranger)).toEqual([]);
    }
    // The owner still sees everything, untouched.
    expect((await right(getSignatureRequest(w.deps)(live, req.id))).recipients.map(id)).toEqual([signer.id]);
    expect((await right(listDocuments(w.deps)(live, {}, {}, id))).data).toEqual([doc.id]);
  });
});

describe('signature requests', () => {
  it('refuses a document that already belongs to another request, and stores nothing of the refused one', async () => {
    const h = harness();
    const w = wire(h);
    const p = principal();
    const { doc, req } = await w.draft(p);
    const free = await right(w.upload(p, 'second.pdf'));
    expect(await left(w.run(createSignatureRequest(w.deps)(p, { title: 'Again', documentIds: [free.id, doc.id] })))).toMatchObject({
      _tag: 'InvalidState',
    });
    expect((await right(listSignatureRequests(w.deps)(p, {}, {}, id))).data).toEqual([req.id]);
    expect((await right(getDocument(w.deps)(p, free.id))).signatureRequestId).toBeNull();
    // The free document is still usable.
    expect((await right(w.run(createSignatureRequest(w.deps)(p, { title: 'Ok', documentIds: [free.id] })))).documentIds).toEqual([free.id]);
  });

  it('send writes exactly one request.sent event, marks documents PENDING, and cannot happen twice', async () => {
    const h = harness();
    const w = wire(h);
    const p = principal();
    const { doc, req } = await w.draft(p);
    const before = (await w.events(p)).map((e) => e.type);
    expect(before).toEqual(['document.created']);
    const sent: SignatureRequest = await right(w.run(sendSignatureRequest(w.deps)(p, req.id)));
    expect(sent.status).toBe('SENT');
    const after = await w.events(p);
    const sentEvents = after.filter((e) => e.type === 'request.sent');
    expect(sentEvents).toHaveLength(1);
    expect(sentEvents[0]!.data).toMatchObject({ request_id: req.id, status: 'SENT' });
    expect((await right(getDocument(w.deps)(p, doc.id))).status).toBe('PENDING');

    expect(await left(w.run(sendSignatureRequest(w.deps)(p, req.id)))).toMatchObject({ _tag: 'InvalidState' });
    expect((await w.events(p)).filter((e) => e.type === 'request.sent')).toHaveLength(1);
  });

  it('adding a recipient or a field after sending is an invalid state', async () => {
    const h = harness();
    const w = wire(h);
    const p = principal();
    const { doc, req, signer } = await w.draft(p);
    await right(w.run(sendSignatureRequest(w.deps)(p, req.id)));
    expect(await left(w.run(addRecipient(w.deps)(p, req.id, { email: 'late@example.com', firstName: 'L', lastName: 'A' })))).toMatchObject({
      _tag: 'InvalidState',
    });
    expect(
      await left(w.run(addField(w.deps)(p, req.id, { documentId: doc.id, recipientId: signer.id, type: 'text', page: 1, x: 0, y: 0, width: 1, height: 1 }))),
    ).toMatchObject({ _tag: 'InvalidState' });
    expect((await right(getSignatureRequest(w.deps)(p, req.id))).recipients).toHaveLength(1);
  });

  it('a failed command leaves no partial write behind', async () => {
    const h = harness();
    const w = wire(h);
    const p = principal();
    const { req } = await w.draft(p);
    // A command that applies a change and then fails: the transaction must drop the change.
    const failing: Command<never> = (tx) =>
      pipe(
        sendSignatureRequest(w.deps)(p, req.id)(tx),
        TE.chainW(() => TE.left<DomainError, never>({ _tag: 'InvalidState', detail: 'later step failed' })),
      );
    expect(await left(w.run(failing))).toMatchObject({ _tag: 'InvalidState' });
    expect((await right(getSignatureRequest(w.deps)(p, req.id))).status).toBe('DRAFT');
    expect((await w.events(p)).filter((e) => e.type === 'request.sent')).toEqual([]);
  });
});

describe('API keys', () => {
  const bootstrap = (h: Harness, scopes: readonly GrantedScope[] = ['*'], mode: 'test' | 'live' = 'test') =>
    right(execute({ uow: h.uow })(bootstrapKey({ clock: h.clock, ids: h.ids, crypto: h.crypto })({ orgName: 'Acme', mode, scopes, name: 'first' })));

  it('authenticate accepts a freshly bootstrapped key and resolves its tenant and scopes', async () => {
    const h = harness();
    const issued = await bootstrap(h, ['documents:read', 'api_keys:write'], 'live');
    expect(issued.secret).toMatch(/^esig_live_[A-Za-z0-9]{32}$/);
    const p = await right(authenticate({ stores: h.stores, crypto: h.crypto, clock: h.clock })(issued.secret));
    expect(p).toEqual({ tenant: { orgId: issued.org.id, mode: 'live' }, scopes: ['documents:read', 'api_keys:write'], credential: { kind: 'api_key', keyId: issued.key.id } });
    // A second bootstrap of the same org reuses it.
    const second = await bootstrap(h, ['*'], 'test');
    expect(second.org).toEqual(issued.org);
  });

  it('authenticate refuses malformed, unknown and revoked keys', async () => {
    const h = harness();
    const issued = await bootstrap(h);
    const auth = authenticate({ stores: h.stores, crypto: h.crypto, clock: h.clock });
    const malformed = [
      '',
      'esig_test_',
      'esig_prod_' + 'a'.repeat(32),
      'esig_test_' + 'a'.repeat(31),
      'esig_test_' + 'a'.repeat(31) + '!',
      ` ${issued.secret}`,
      `${issued.secret}\n`,
      issued.secret.toUpperCase(),
      'Bearer ' + issued.secret,
    ];
    for (const s of malformed) expect(await left(auth(s)), JSON.stringify(s)).toMatchObject({ _tag: 'Unauthenticated' });
    expect(await left(auth('esig_test_' + 'b'.repeat(32)))).toMatchObject({ _tag: 'Unauthenticated' });
    // The same random part under the other mode is another key.
    expect(await left(auth(issued.secret.replace('esig_test_', 'esig_live_')))).toMatchObject({ _tag: 'Unauthenticated' });

    const p = await right(auth(issued.secret));
    await right(execute({ uow: h.uow })(revokeApiKey({ clock: h.clock })(p, issued.key.id)));
    expect(await left(auth(issued.secret))).toMatchObject({ _tag: 'Unauthenticated' });
  });

  it('createApiKey grants at most the caller’s scopes, in the caller’s org and mode', async () => {
    const h = harness();
    const w = wire(h);
    const caller = principal(['api_keys:write', 'documents:read'], { orgId: 'org_A', mode: 'live' });
    const create = (scopes: GrantedScope[]) => w.run(createApiKey(w.deps)(caller, { name: 'child', scopes }));
    expect(await left(create(['documents:write']))).toEqual({ _tag: 'InsufficientScope', scope: 'documents:write' });
    expect(await left(create(['*']))).toEqual({ _tag: 'InsufficientScope', scope: '*' });
    expect(await left(create(['documents:read', 'logs:read']))).toEqual({ _tag: 'InsufficientScope', scope: 'logs:read' });
    const child = await right(create(['documents:read']));
    expect(child.key).toMatchObject({ orgId: 'org_A', mode: 'live', scopes: ['documents:read'] });
    expect(child.secret).toMatch(/^esig_live_/);
    const p = await right(authenticate({ stores: h.stores, crypto: h.crypto, clock: h.clock })(child.secret));
    expect(p.scopes).toEqual(['documents:read']);
    // Only the allowed key was stored.
    expect((await right(listApiKeys(w.deps)(caller, {}, id))).data).toEqual([child.key.id]);
    // A '*' caller may hand on anything.
    const root = principal(['*'], caller.tenant);
    expect((await right(w.run(createApiKey(w.deps)(root, { name: 'all', scopes: ['*'] })))).key.scopes).toEqual(['*']);
  });

  it('revokeApiKey revokes only keys the caller could have minted', async () => {
    const h = harness();
    const w = wire(h);
    const root = principal(['*'], { orgId: 'org_A', mode: 'live' });
    const narrow = principal(['api_keys:write', 'documents:read'], root.tenant);
    const mint = async (scopes: GrantedScope[]) => (await right(w.run(createApiKey(w.deps)(root, { name: 'k', scopes })))).key;
    const strong = await mint(['*']);
    const wider = await mint(['api_keys:write', 'logs:read']);
    const within = await mint(['documents:read']);
    const revoke = (p: Principal, keyId: string) => w.run(revokeApiKey({ clock: h.clock })(p, keyId));
    expect(await left(revoke(narrow, strong.id))).toEqual({ _tag: 'InsufficientScope', scope: '*' });
    expect(await left(revoke(narrow, wider.id))).toEqual({ _tag: 'InsufficientScope', scope: 'logs:read' });
    expect((await right(revoke(narrow, within.id))).revokedAt).not.toBeNull();
    // The refused keys are untouched; '*' may revoke them.
    const keys = (await right(listApiKeys(w.deps)(root, { limit: 100 }, (k) => k))).data;
    expect(keys.filter((k) => k.revokedAt !== null).map((k) => k.id)).toEqual([within.id]);
    expect((await right(revoke(root, strong.id))).revokedAt).not.toBeNull();
    expect(await left(revoke(narrow, 'key_unknown'))).toMatchObject({ _tag: 'NotFound' });
  });
});
