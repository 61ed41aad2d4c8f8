import { describe, expect, it } from 'vitest';
import type { OAuthClient, Stores } from '@esig/core';
import { UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS, UNUSED_OAUTH_CLIENT_TTL_MS, purgeUnusedOAuthClients } from '@esig/core';
import { harness, right } from './support.js';

const client = (id: string, createdAt: string): OAuthClient => ({ id, name: id, redirectUris: ['http://127.0.0.1/cb'], kind: 'registered', createdAt });

describe('purgeUnusedOAuthClients', () => {
  it('deletes a registered client no code or grant names once it is a day old; later runs look only from the last clean cutoff, less the overlap', async () => {
    const h = harness();
    const afters: Array<string | null> = [];
    const stores: Stores = { ...h.stores, oauth: { ...h.stores.oauth, purgeUnusedClients: (after, before, limit) => (afters.push(after), h.stores.oauth.purgeUnusedClients(after, before, limit)) } };
    const purge = purgeUnusedOAuthClients({ stores, clock: h.clock });
    const at = () => h.clock.now().toISOString();
    await right(h.stores.oauth.insertClient(client('ocl_unused', at())));
    await right(h.stores.oauth.insertClient(client('ocl_granted', at())));
    await right(
      h.stores.oauth.insertGrant({ id: 'oag_1', orgId: 'org_1', mode: 'test', keyId: 'key_1', clientId: 'ocl_granted', clientName: 'g', scopes: ['documents:read'], resource: 'http://x/mcp', createdAt: at(), revokedAt: null }),
    );

    h.clock.advance(UNUSED_OAUTH_CLIENT_TTL_MS - 1);
    expect(await right(purge(10))).toBe(0);
    h.clock.advance(2);
    expect(await right(purge(10))).toBe(1);
    expect(await right(h.stores.oauth.findClient('ocl_unused'))).toBeNull();
    expect(await right(h.stores.oauth.findClient('ocl_granted'))).not.toBeNull();
    // The first run looked from the start; each run after a clean one looks from its cutoff less the overlap.
    expect(afters[0]).toBeNull();
    const cutoff = new Date(h.clock.now().getTime() - UNUSED_OAUTH_CLIENT_TTL_MS);
    expect(afters[2]).toBeUndefined();
    expect(await right(purge(10))).toBe(0);
    expect(afters[2]).toBe(new Date(cutoff.getTime() - UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS).toISOString());

    // A registration stamped before that cutoff but committed after the run read the table is still found.
    await right(h.stores.oauth.insertClient(client('ocl_late', new Date(cutoff.getTime() - UNUSED_OAUTH_CLIENT_PURGE_OVERLAP_MS / 2).toISOString())));
    h.clock.advance(60_000);
    expect(await right(purge(10))).toBe(1);
    expect(await right(h.stores.oauth.findClient('ocl_late'))).toBeNull();
  });

  it('a full batch leaves the next call to look from where the run began', async () => {
    const h = harness();
    const purge = purgeUnusedOAuthClients({ stores: h.stores, clock: h.clock });
    for (let i = 0; i < 5; i++) await right(h.stores.oauth.insertClient(client(`ocl_${i}`, h.clock.now().toISOString())));
    h.clock.advance(UNUSED_OAUTH_CLIENT_TTL_MS + 1);
    expect(await right(purge(2))).toBe(2);
    expect(await right(purge(2))).toBe(2);
    expect(await right(purge(2))).toBe(1);
    expect(await right(purge(2))).toBe(0);
  });
});
