import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, at, fails, makeApiKey, makeOrg, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

export const apiKeysContract = (h: Harness) =>
  describe('apiKeys', () => {
    it('round-trips every field and finds a key by secret hash across tenants, revoked or not', async () => {
      const star = makeApiKey(TENANT_A, { scopes: ['*'] });
      const revoked = makeApiKey(TENANT_B, { revokedAt: at(5), scopes: [] });
      await ok(h().stores.apiKeys.insert(star));
      await ok(h().stores.apiKeys.insert(revoked));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, star.id))).toEqual(star);
      expect(await ok(h().stores.apiKeys.findBySecretHash(star.secretHash))).toEqual(star);
      expect(await ok(h().stores.apiKeys.findBySecretHash(revoked.secretHash))).toEqual(revoked);
      expect(await ok(h().stores.apiKeys.findBySecretHash('no-such-hash'))).toBeNull();
    });

    it('refuses a second key with the same secret hash and keeps the first', async () => {
      const first = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(first));
      await fails(h().stores.apiKeys.insert(makeApiKey(TENANT_B, { secretHash: first.secretHash })));
      expect(await ok(h().stores.apiKeys.findBySecretHash(first.secretHash))).toEqual(first);
    });

    it('findById finds nothing for another org or the other mode', async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      for (const t of STRANGERS) expect(await ok(h().stores.apiKeys.findById(t, key.id))).toBeNull();
    });

    it('revoke sets revokedAt once; revoking again, or an unknown key, changes nothing', async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      await ok(h().stores.apiKeys.revoke(TENANT_A, key.id, at(10)));
      await ok(h().stores.apiKeys.revoke(TENANT_A, key.id, at(20)));
      await ok(h().stores.apiKeys.revoke(TENANT_A, 'key_unknown', at(20)));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, key.id))).toEqual({ ...key, revokedAt: at(10) });
    });

    it("revoke cannot reach another org's or mode's key", async () => {
      const key = makeApiKey(TENANT_A);
      await ok(h().stores.apiKeys.insert(key));
      for (const t of STRANGERS) await ok(h().stores.apiKeys.revoke(t, key.id, at(10)));
      expect(await ok(h().stores.apiKeys.findById(TENANT_A, key.id))).toEqual(key);
    });

    it('count counts every key of the installation, revoked included', async () => {
      expect(await ok(h().stores.apiKeys.count())).toBe(0);
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_A)));
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_A_LIVE)));
      await ok(h().stores.apiKeys.insert(makeApiKey(TENANT_B, { revokedAt: at(1) })));
      expect(await ok(h().stores.apiKeys.count())).toBe(3);
    });
  });

export const orgsContract = (h: Harness) =>
  describe('orgs', () => {
    it('round-trips an org and finds it by name; an unknown name is null', async () => {
      const org = makeOrg({ name: 'Acme GmbH' });
      await ok(h().stores.orgs.insert(org));
      expect(await ok(h().stores.orgs.findByName('Acme GmbH'))).toEqual(org);
      expect(await ok(h().stores.orgs.findByName('acme gmbh '))).toBeNull();
    });

    it('refuses a second org with a taken name and keeps the first', async () => {
      const org = makeOrg({ name: 'Acme' });
      await ok(h().stores.orgs.insert(org));
      await fails(h().stores.orgs.insert(makeOrg({ name: 'Acme' })));
      expect(await ok(h().stores.orgs.findByName('Acme'))).toEqual(org);
    });
  });

