import type { AuthorizationCode, OAuthClient, OAuthGrant, OAuthToken, Tenant } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_B, at, fails, freshId, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

const client = (over: Partial<OAuthClient> = {}): OAuthClient => ({
  id: freshId('ocl'),
  name: 'Claude',
  redirectUris: ['https://claude.ai/api/mcp/auth_callback', 'http://127.0.0.1/callback'],
  kind: 'registered',
  createdAt: at(0),
  ...over,
});

const code = (t: Tenant, over: Partial<AuthorizationCode> = {}): AuthorizationCode => ({
  codeHash: freshId('hash'),
  clientId: 'ocl_1',
  redirectUri: 'https://claude.ai/api/mcp/auth_callback',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  resource: 'https://sign.example.com/mcp',
  scopes: ['documents:read', 'signature_requests:write'],
  orgId: t.orgId,
  mode: t.mode,
  keyId: 'key_1',
  createdAt: at(0),
  expiresAt: at(60),
  usedAt: null,
  grantId: null,
  ...over,
});

const grant = (t: Tenant, over: Partial<OAuthGrant> = {}): OAuthGrant => ({
  id: freshId('oag'),
  orgId: t.orgId,
  mode: t.mode,
  keyId: 'key_1',
  clientId: 'https://app.example.com/client.json',
  clientName: 'Example',
  scopes: ['documents:read'],
  resource: 'https://sign.example.com/mcp',
  createdAt: at(0),
  revokedAt: null,
  ...over,
});

const token = (grantId: string, over: Partial<OAuthToken> = {}): OAuthToken => ({
  tokenHash: freshId('hash'),
  grantId,
  kind: 'access',
  createdAt: at(0),
  expiresAt: at(3600),
  spentAt: null,
  ...over,
});

export const oauthContract = (h: Harness) =>
  describe('oauth', () => {
    it('purgeUnusedClients deletes the oldest registered clients that no code or grant names, before the time given, up to the limit', async () => {
      const s = h().stores.oauth;
      // Other tests of the suite may have left clients of their own; these are told apart by name.
      const old = [client({ createdAt: at(-3000), name: 'old-1' }), client({ createdAt: at(-2999), name: 'old-2' }), client({ createdAt: at(-2998), name: 'old-3' })];
      const withCode = client({ createdAt: at(-3000), name: 'with-code' });
      const withGrant = client({ createdAt: at(-3000), name: 'with-grant' });
      const recent = client({ createdAt: at(-10), name: 'recent' });
      const document = client({ id: 'https://tool.example/client.json', kind: 'metadata_document', createdAt: at(-3000), name: 'document' });
      for (const c of [...old, withCode, withGrant, recent, document]) await ok(s.insertClient(c));
      await ok(s.insertCode(code(TENANT_A, { clientId: withCode.id })));
      await ok(s.insertGrant(grant(TENANT_B, { clientId: withGrant.id })));
      const before = at(-100);
      // Drain whatever older unused clients other tests left, two at a time, oldest first.
      let purged = 0;
      for (let n = 2; n === 2; purged += n) n = await ok(s.purgeUnusedClients(null, before, 2));
      expect(purged).toBeGreaterThanOrEqual(3);
      for (const c of old) expect(await ok(s.findClient(c.id))).toBeNull();
      for (const c of [withCode, withGrant, recent]) expect(await ok(s.findClient(c.id))).toEqual(c);
      expect(await ok(s.purgeUnusedClients(null, before, 10))).toBe(0);
      expect(await ok(s.findClient(recent.id))).toEqual(recent);
      // Only those created after `after`: an older unused client is left to a run from the start.
      const older = client({ createdAt: at(-5000), name: 'older' });
      const newer = client({ createdAt: at(-4000), name: 'newer' });
      for (const c of [older, newer]) await ok(s.insertClient(c));
      expect(await ok(s.purgeUnusedClients(at(-4500), before, 10))).toBe(1);
      expect(await ok(s.findClient(newer.id))).toBeNull();
      expect(await ok(s.findClient(older.id))).toEqual(older);
      expect(await ok(s.purgeUnusedClients(null, before, 10))).toBe(1);
      expect(await ok(s.findClient(older.id))).toBeNull();
    });

    it('round-trips a client; a taken id is refused; an unknown id is null', async () => {
      const c = client();
      await ok(h().stores.oauth.insertClient(c));
      expect(await ok(h().stores.oauth.findClient(c.id))).toEqual(c);
      await fails(h().stores.oauth.insertClient({ ...c, name: 'other' }));
      expect(await ok(h().stores.oauth.findClient(c.id))).toEqual(c);
      expect(await ok(h().stores.oauth.findClient('ocl_unknown'))).toBeNull();
    });

    it('useCode consumes a code once: the first call sees it unused, a replay sees the first use', async () => {
      const c = code(TENANT_A);
      await ok(h().stores.oauth.insertCode(c));
      await fails(h().stores.oauth.insertCode(c));
      expect(await ok(h().stores.oauth.useCode(c.codeHash, at(5), 'oag_first'))).toEqual(c);
      expect(await ok(h().stores.oauth.useCode(c.codeHash, at(6), 'oag_second'))).toEqual({ ...c, usedAt: at(5), grantId: 'oag_first' });
      expect(await ok(h().stores.oauth.useCode('no-such-hash', at(6), 'oag_x'))).toBeNull();
    });

    it('of two concurrent useCode calls exactly one consumes the code', async () => {
      const c = code(TENANT_A);
      await ok(h().stores.oauth.insertCode(c));
      const [a, b] = await Promise.all([
        h().uow.transaction((tx) => tx.oauth.useCode(c.codeHash, at(5), 'oag_a'))(),
        h().uow.transaction((tx) => tx.oauth.useCode(c.codeHash, at(5), 'oag_b'))(),
      ]);
      const firsts = [a, b].filter((r) => r._tag === 'Right' && r.right !== null && r.right.usedAt === null);
      expect(firsts).toHaveLength(1);
    });

    it('finds a grant by id across tenants; lists grants per tenant only, revoked included', async () => {
      const g1 = grant(TENANT_A, { createdAt: at(1) });
      const g2 = grant(TENANT_A, { createdAt: at(2), revokedAt: at(3) });
      const other = grant(TENANT_B);
      for (const g of [g1, g2, other]) await ok(h().stores.oauth.insertGrant(g));
      await fails(h().stores.oauth.insertGrant(g1));
      expect(await ok(h().stores.oauth.findGrant(other.id))).toEqual(other);
      const page = await ok(h().stores.oauth.listGrants(TENANT_A, { limit: 10, order: 'asc', after: null, filter: undefined }));
      expect(page).toEqual({ items: [g1, g2], hasMore: false });
      for (const t of STRANGERS.filter((s) => s !== TENANT_B)) expect((await ok(h().stores.oauth.listGrants(t, { limit: 10, order: 'asc', after: null, filter: undefined }))).items).toEqual([]);
    });

    it('revokeGrant sets revokedAt once; revokeGrantsOfKey revokes only that key’s live grants', async () => {
      const g = grant(TENANT_A, { keyId: 'key_a' });
      const same = grant(TENANT_A, { keyId: 'key_a' });
      const otherKey = grant(TENANT_A, { keyId: 'key_b' });
      for (const x of [g, same, otherKey]) await ok(h().stores.oauth.insertGrant(x));
      await ok(h().stores.oauth.revokeGrant(g.id, at(10)));
      await ok(h().stores.oauth.revokeGrant(g.id, at(20)));
      await ok(h().stores.oauth.revokeGrant('oag_unknown', at(20)));
      expect((await ok(h().stores.oauth.findGrant(g.id)))?.revokedAt).toBe(at(10));
      await ok(h().stores.oauth.revokeGrantsOfKey('key_a', at(30)));
      expect((await ok(h().stores.oauth.findGrant(g.id)))?.revokedAt).toBe(at(10));
      expect((await ok(h().stores.oauth.findGrant(same.id)))?.revokedAt).toBe(at(30));
      expect((await ok(h().stores.oauth.findGrant(otherKey.id)))?.revokedAt).toBeNull();
    });

    it('round-trips tokens; spendToken spends a token once', async () => {
      const g = grant(TENANT_A);
      await ok(h().stores.oauth.insertGrant(g));
      const access = token(g.id);
      const refresh = token(g.id, { kind: 'refresh', expiresAt: null });
      await ok(h().stores.oauth.insertToken(access));
      await ok(h().stores.oauth.insertToken(refresh));
      await fails(h().stores.oauth.insertToken(access));
      expect(await ok(h().stores.oauth.findToken(access.tokenHash))).toEqual(access);
      expect(await ok(h().stores.oauth.findToken(refresh.tokenHash))).toEqual(refresh);
      expect(await ok(h().stores.oauth.findToken('no-such-hash'))).toBeNull();
      expect(await ok(h().stores.oauth.spendToken(refresh.tokenHash, at(7)))).toBe(true);
      expect(await ok(h().stores.oauth.spendToken(refresh.tokenHash, at(8)))).toBe(false);
      expect(await ok(h().stores.oauth.spendToken('no-such-hash', at(8)))).toBe(false);
      expect(await ok(h().stores.oauth.findToken(refresh.tokenHash))).toEqual({ ...refresh, spentAt: at(7) });
    });
  });
