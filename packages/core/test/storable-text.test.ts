import fc from 'fast-check';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { DomainError } from '@esig/core';
import {
  addField,
  addRecipient,
  checkClientMetadata,
  createApiKey,
  createEmbeddedSession,
  createSignatureRequest,
  createWebhookEndpoint,
  declineAsRecipient,
  inspectUpload,
  registerOAuthClient,
  signAsRecipient,
  unstorableText,
  updateWebhookEndpoint,
  uploadDocument,
} from '@esig/core';
import { left, right } from './support.js';
import type { World } from './world.js';
import { CLIENT, sentRequest, signInput, world } from './world.js';

const MESSAGE = 'must not contain NUL or unpaired surrogate characters';

/** What UTF-8 (every store's encoding) keeps of a string: a lone surrogate comes back as U+FFFD. */
const utf8RoundTrip = (s: string) => new TextDecoder().decode(new TextEncoder().encode(s));

describe('unstorableText', () => {
  it('names the first string, value or key, at any depth, that holds NUL or a lone surrogate', () => {
    expect(unstorableText('ok \u{1F58B} pen')).toBeNull();
    expect(unstorableText('a\u0000b')).toEqual({ path: '(body)', message: MESSAGE });
    expect(unstorableText('a\u0000b', 'reason')).toEqual({ path: 'reason', message: MESSAGE });
    expect(unstorableText({ title: 'ok', recipients: [{ name: 'x' }, { name: 'lone \uDC00' }] })).toEqual({ path: 'recipients.1.name', message: MESSAGE });
    expect(unstorableText({ values: { 'fld\u0000': 'x' } })).toEqual({ path: 'values.fld\u0000', message: MESSAGE });
    expect(unstorableText({ a: 1, b: null, c: true, d: undefined })).toBeNull();
    expect(unstorableText('high at the end \uD83D')).not.toBeNull();
  });

  it('accepts exactly the strings that UTF-8 keeps as they are and that hold no NUL (property)', () => {
    // Strings of UTF-16 code units, so lone and paired surrogates both come up often.
    const units = fc.array(fc.oneof(fc.integer({ min: 0, max: 0x7f }), fc.integer({ min: 0xd7f0, max: 0xe010 }), fc.integer({ min: 0, max: 0xffff })), { maxLength: 24 });
    fc.assert(
      fc.property(units, (codes) => {
        const s = String.fromCharCode(...codes);
        const storable = utf8RoundTrip(s) === s && !s.includes('\u0000');
        expect(unstorableText(s) === null).toBe(storable);
        expect(unstorableText({ [s]: 'v' }) === null).toBe(storable);
      }),
    );
  });
});

/**
 * Every use case that keeps text an embedder gives refuses text no store keeps as given, naming the field, before
 * it writes anything. Over HTTP the adapter refuses it first; these are the calls an embedder makes directly.
 */
describe('use cases refuse unstorable text before writing', () => {
  const refused = (path: string) => ({ _tag: 'ValidationFailed', errors: [{ path, message: MESSAGE }] });
  /** Everything the memory stores hold, to show a refused call wrote nothing. */
  const state = async (w: World, sent: Awaited<ReturnType<typeof sentRequest>>) => ({
    request: await right(w.h.stores.signatureRequests.findById(sent.p.tenant, sent.req.id)),
    documents: (await right(w.h.stores.documents.list(sent.p.tenant, { limit: 100, order: 'asc', after: null, filter: {} }))).items,
    events: (await right(w.h.stores.events.list(sent.p.tenant, { limit: 100, order: 'asc', after: null, filter: {} }))).items.length,
    keys: (await right(w.h.stores.apiKeys.list(sent.p.tenant, { limit: 100, order: 'asc', after: null, filter: undefined }))).items.length,
    endpoints: (await right(w.h.stores.webhookEndpoints.list(sent.p.tenant, { limit: 100, order: 'asc', after: null, filter: undefined }))).items,
  });

  it('each write, with the field it names', async () => {
    const w = world();
    const draft = await sentRequest(w, { send: false });
    const sent = await sentRequest(w);
    const { p } = draft;
    const docId = draft.docs[0]!.doc.id;
    const rcpId = draft.signers[0]!.rcp.id;
    // The fake network knows only the receivers set up on it.
    w.net.receiver('https://hooks.example/in');
    w.net.receiver('https://hooks.example/b');
    const endpoint = await right(pipe(createWebhookEndpoint(w.deps)(p, { url: 'https://hooks.example/in', events: ['request.completed'] }), TE.chainW(w.run)));
    const before = [await state(w, draft), await state(w, sent)];
    const calls: Array<[string, () => TE.TaskEither<DomainError, unknown>]> = [
      ['title', () => w.run(createSignatureRequest(w.deps)(p, { title: 'NDA\u0000', documentIds: [docId] }))],
      ['message', () => w.run(createSignatureRequest(w.deps)(p, { title: 'NDA', message: '\uDBFF', documentIds: [docId] }))],
      ['firstName', () => w.run(addRecipient(w.deps)(p, draft.req.id, { email: 'b@example.com', firstName: 'B\u0000', lastName: 'C' }))],
      ['recipientId', () => w.run(addField(w.deps)(p, draft.req.id, { documentId: docId, recipientId: `${rcpId}\u0000`, type: 'text', page: 1, x: 1, y: 1, width: 9, height: 9 }))],
      ['name', () => w.run(createApiKey(w.deps)(p, { name: 'ci \uDC00', scopes: ['documents:read'] }))],
      ['name', () => pipe(inspectUpload(w.deps)(p, new TextEncoder().encode('%PDF-1.7 x\n')), TE.chainW((pdf) => w.run(uploadDocument(w.deps)(p, { name: 'a\u0000.pdf', pdf }))))],
      ['description', () => pipe(createWebhookEndpoint(w.deps)(p, { url: 'https://hooks.example/b', events: ['request.completed'], description: 'CRM\u0000' }), TE.chainW(w.run))],
      ['description', () => pipe(updateWebhookEndpoint(w.deps)(p, endpoint.endpoint.id, { description: '\uD800' }), TE.chainW(w.run))],
      ['reason', () => declineAsRecipient(w.deps)(sent.signers[0]!.token, 'no\u0000', CLIENT)],
      ['values.fld\u0000', () => signAsRecipient(w.deps)(sent.signers[0]!.token, { ...signInput(sent.signers[0]!), values: { 'fld\u0000': 'x' } }, CLIENT)],
    ];
    for (const [path, call] of calls) expect({ path, error: await left(call()) }).toMatchObject({ path, error: refused(path) });
    // An embed session's origin must equal its serialized form, which no such character survives.
    const embed = createEmbeddedSession({ ...w.deps, embedSessionTtlS: 300 })(sent.p, sent.req.id, sent.signers[0]!.rcp.id, { origin: 'https://app.example\u0000' });
    expect(await left(w.run(embed))).toMatchObject({ _tag: 'ValidationFailed', errors: [{ path: 'origin' }] });
    expect([await state(w, draft), await state(w, sent)]).toEqual(before);
  });

  it('an OAuth client registration, as the OAuth error its endpoint answers', async () => {
    const w = world();
    expect(checkClientMetadata({ clientName: 'Claude\u0000', redirectUris: ['https://claude.ai/cb'] })).toMatchObject({ error: 'invalid_client_metadata' });
    expect(checkClientMetadata({ clientName: 'Claude', redirectUris: ['https://claude.ai/cb\uDC00'] })).toMatchObject({ error: 'invalid_redirect_uri' });
    expect(await left(w.h.uow.transaction(registerOAuthClient(w.deps)({ clientName: '\u0000', redirectUris: ['https://claude.ai/cb'] })))).toMatchObject({ error: 'invalid_client_metadata' });
  });
});
