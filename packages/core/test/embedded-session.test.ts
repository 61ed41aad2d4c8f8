import { describe, expect, it } from 'vitest';
import { EMBED_CREDENTIAL_TTL_MS, createEmbeddedSession, embedOriginProblem, openEmbeddedSession, openSigningLink, signAsRecipient } from '@esig/core';
import { OTHER_TENANTS } from './arbitraries.js';
import { left, principal, right } from './support.js';
import { CLIENT, sentRequest, signInput, world } from './world.js';

const ORIGIN = 'https://app.example.com';

const setup = async (o: Parameters<typeof sentRequest>[1] = {}) => {
  const w = world();
  const sent = await sentRequest(w, o);
  const deps = { ...w.deps, embedSessionTtlS: 300 };
  const create = (recipientId: string, origin = ORIGIN, p = sent.p) => w.run(createEmbeddedSession(deps)(p, sent.req.id, recipientId, { origin }));
  const open = (token: string) => openEmbeddedSession(w.deps)(token);
  return { w, sent, create, open };
};

describe('embedOriginProblem', () => {
  it('accepts serialized https origins, and loopback http in test mode only', () => {
    for (const o of ['https://a.example', 'https://a.example:8443', 'https://[2001:db8::1]', 'https://203.0.113.9:9'])
      expect([o, embedOriginProblem(o, 'live')]).toEqual([o, null]);
    for (const o of ['http://localhost:3000', 'http://127.0.0.1:8080', 'http://[::1]:5173']) {
      expect([o, embedOriginProblem(o, 'test')]).toEqual([o, null]);
      expect(embedOriginProblem(o, 'live')).not.toBeNull();
    }
    for (const o of ['https://a.example/', 'HTTPS://a.example', 'https://a.example:443', 'http://a.example', 'https://*.a.example', 'https://a.example:0', 'https://-a.example', 'https://[zz::1]'])
      expect([o, embedOriginProblem(o, 'test')]).not.toEqual([o, null]);
  });
});

describe('createEmbeddedSession and openEmbeddedSession', () => {
  it('stores the hash of a fresh token bound to the origin; the first load consumes it and mints a signer credential', async () => {
    const { w, sent, create, open } = await setup();
    const s = await right(create(sent.signers[0]!.rcp.id));
    expect(s.token).toMatch(/^[A-Za-z0-9]{43}$/);
    expect(s.session).toMatchObject({ origin: ORIGIN, requestId: sent.req.id, recipientId: sent.signers[0]!.rcp.id, usedAt: null });
    expect(Date.parse(s.session.expiresAt) - Date.parse(s.session.createdAt)).toBe(300_000);
    const stored = await right(w.h.stores.embedSessions.findByTokenHash(w.h.crypto.sha256Hex(s.token)));
    expect(JSON.stringify(stored)).not.toContain(s.token);

    const first = await right(open(s.token));
    if (first._tag !== 'Opened') throw new Error(first._tag);
    const view = await right(openSigningLink(w.deps)(first.credential, CLIENT));
    expect(view.recipient.id).toBe(sent.signers[0]!.rcp.id);
    expect((await right(open(s.token)))._tag).toBe('Used');
  });

  it('the credential a load mints is short-lived: it stops opening the request after EMBED_CREDENTIAL_TTL_MS', async () => {
    const { w, sent, create, open } = await setup();
    const s = await right(create(sent.signers[0]!.rcp.id));
    const first = await right(open(s.token));
    if (first._tag !== 'Opened') throw new Error(first._tag);
    w.h.clock.advance(EMBED_CREDENTIAL_TTL_MS - 1);
    await right(openSigningLink(w.deps)(first.credential, CLIENT));
    w.h.clock.advance(1);
    expect(await left(openSigningLink(w.deps)(first.credential, CLIENT))).toMatchObject({ _tag: 'NotFound' });
    expect(await left(signAsRecipient(w.deps)(first.credential, signInput(sent.signers[0]!), CLIENT))).toMatchObject({ _tag: 'NotFound' });
  });

  it('expires unused after the lifetime, and an unknown token is not found', async () => {
    const { w, sent, create, open } = await setup();
    const s = await right(create(sent.signers[0]!.rcp.id));
    w.h.clock.advance(300_000);
    expect((await right(open(s.token)))._tag).toBe('Expired');
    expect(await left(open('A'.repeat(43)))).toMatchObject({ _tag: 'NotFound' });
    expect(await left(open('short'))).toMatchObject({ _tag: 'NotFound' });
  });

  it('refuses a bad origin (400), a recipient who cannot sign now (409), another tenant (404)', async () => {
    const { sent, create } = await setup({ signingOrder: 'sequential', signers: [{ order: 1 }, { order: 2 }], cc: 1 });
    expect(await left(create(sent.signers[0]!.rcp.id, 'https://app.example.com/'))).toMatchObject({ _tag: 'ValidationFailed' });
    expect(await left(create(sent.signers[1]!.rcp.id))).toMatchObject({ _tag: 'InvalidState' });
    expect(await left(create(sent.cc[0]!.id))).toMatchObject({ _tag: 'InvalidState' });
    for (const tenant of OTHER_TENANTS) expect(await left(create(sent.signers[0]!.rcp.id, ORIGIN, { ...principal(['*']), tenant }))).toMatchObject({ _tag: 'NotFound' });
    expect(await left(create(sent.signers[0]!.rcp.id, ORIGIN, principal(['signature_requests:read'])))).toMatchObject({ _tag: 'InsufficientScope' });
  });
});
