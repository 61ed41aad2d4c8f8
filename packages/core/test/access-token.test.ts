import { describe, expect, it } from 'vitest';
import type { OAuthGrant } from '@esig/core';
import { ACCESS_TOKEN_TTL_S, authenticate, bootstrapKey, execute, issueTokens, revokeOAuthToken } from '@esig/core';
import { harness, left, right } from './support.js';

/** A grant of a fresh key, and its first tokens, as a completed consent leaves them. */
const setup = async () => {
  const h = harness();
  const issued = await right(execute(h)(bootstrapKey(h)({ orgName: 'acme', mode: 'test', scopes: ['*'], name: 'admin' })));
  const grant: OAuthGrant = {
    id: 'oag_1',
    orgId: issued.org.id,
    mode: 'test',
    keyId: issued.key.id,
    clientId: 'ocl_1',
    clientName: 'agent',
    scopes: ['documents:read'],
    resource: 'https://esig.example/mcp',
    createdAt: h.clock.now().toISOString(),
    revokedAt: null,
  };
  await right(h.uow.transaction((tx) => tx.oauth.insertGrant(grant)));
  const tokens = await right(h.uow.transaction((tx) => issueTokens(h)(tx, grant)));
  return { h, issued, grant, tokens, auth: () => authenticate(h)(tokens.access_token) };
};

describe('an OAuth access token as a credential', () => {
  it('stands for its grant: the consenting key’s tenant, the granted scopes, the client', async () => {
    const { issued, grant, auth } = await setup();
    expect(await right(auth())).toEqual({
      tenant: { orgId: issued.org.id, mode: 'test' },
      scopes: ['documents:read'],
      credential: { kind: 'access_token', keyId: issued.key.id, clientId: 'ocl_1', grantId: grant.id },
    });
  });

  it('expires after one hour', async () => {
    const { h, auth } = await setup();
    h.clock.advance(3_600_000 - 1);
    await right(auth());
    h.clock.advance(1);
    expect(await left(auth())).toMatchObject({ _tag: 'Unauthenticated' });
  });

  it('stops working when its grant is revoked, or the key that consented', async () => {
    const a = await setup();
    await right(a.auth());
    await right(a.h.uow.transaction((tx) => tx.oauth.revokeGrant(a.grant.id, a.h.clock.now().toISOString())));
    expect(await left(a.auth())).toMatchObject({ _tag: 'Unauthenticated' });
    const b = await setup();
    await right(b.auth());
    await right(b.h.uow.transaction((tx) => tx.apiKeys.revoke({ orgId: b.issued.org.id, mode: 'test' }, b.issued.key.id, b.h.clock.now().toISOString())));
    expect(await left(b.auth())).toMatchObject({ _tag: 'Unauthenticated' });
  });

  it('a refresh token is not an access token', async () => {
    const { h, tokens } = await setup();
    expect(await left(authenticate(h)(tokens.refresh_token))).toMatchObject({ _tag: 'Unauthenticated' });
  });
});

describe('revoking an OAuth token (RFC 7009)', () => {
  const revoke = (a: Awaited<ReturnType<typeof setup>>, token: string, clientId: string | undefined) =>
    a.h.uow.transaction(revokeOAuthToken(a.h)({ token, clientId }))();

  it('refuses a token issued to another client than the one named, and leaves its grant alone (§2.1)', async () => {
    const a = await setup();
    expect(await left(() => revoke(a, a.tokens.access_token, 'ocl_2'))).toEqual({ _tag: 'OAuthError', error: 'unauthorized_client', description: 'This token was issued to another client.' });
    expect(await left(() => revoke(a, a.tokens.refresh_token, 'ocl_2'))).toMatchObject({ error: 'unauthorized_client' });
    await right(a.auth());
    // Once the grant is revoked its tokens are as good as unknown, whoever names itself (§2.2).
    await right(() => revoke(a, a.tokens.refresh_token, 'ocl_1'));
    await right(() => revoke(a, a.tokens.access_token, 'ocl_2'));
    // An expired access token too.
    const b = await setup();
    b.h.clock.advance(ACCESS_TOKEN_TTL_S * 1000);
    await right(() => revoke(b, b.tokens.access_token, 'ocl_2'));
    expect(await left(() => revoke(b, b.tokens.refresh_token, 'ocl_2'))).toMatchObject({ error: 'unauthorized_client' });
  });

  it('answers an unknown token as revoked, changing nothing (§2.2), and revokes the grant for its own client or none named', async () => {
    for (const clientId of ['ocl_1', undefined]) {
      const a = await setup();
      await right(() => revoke(a, 'esig_oat_unknown', clientId));
      await right(a.auth());
      await right(() => revoke(a, a.tokens.refresh_token, clientId));
      expect((await left(a.auth()))._tag).toBe('Unauthenticated');
    }
  });
});
