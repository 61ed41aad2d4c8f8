import { describe, expect, it } from 'vitest';
import type { Admission, KeyAdmission, KeyLimits } from '@esig/core';
import { admitApiKey, bootstrapKey, execute } from '@esig/core';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { harness, left, right } from './support.js';

const LIMITS: KeyLimits = { perKey: 10, perOrg: 20 };
const allowed = { allowed: true, limit: 10, remaining: 9, resetS: 60, retryAfterS: 0 };

/** A KeyAdmission that answers from the harness's key store and records what it was asked. */
const recording = (h: ReturnType<typeof harness>, decide: (a: Admission['key']) => Admission['decision']) => {
  const asked: string[] = [];
  const admission: KeyAdmission = {
    admit: (secretHash) => {
      asked.push(secretHash);
      return TE.map((key: Admission['key']) => ({ key, decision: decide(key) }))(h.stores.apiKeys.findBySecretHash(secretHash));
    },
  };
  return { admission, asked };
};

describe('admitApiKey', () => {
  it('a live key: its principal and the decision on its call', async () => {
    const h = harness();
    const issued = await right(execute(h)(bootstrapKey(h)({ orgName: 'acme', mode: 'live', scopes: ['documents:read'], name: 'k' })));
    const { admission } = recording(h, () => allowed);
    expect(await right(admitApiKey({ keyAdmission: admission, crypto: h.crypto })(issued.secret, LIMITS))).toEqual({
      principal: { tenant: { orgId: issued.org.id, mode: 'live' }, scopes: ['documents:read'], credential: { kind: 'api_key', keyId: issued.key.id } },
      decision: allowed,
    });
  });

  it('a malformed secret is refused without asking the store', async () => {
    const h = harness();
    const { admission, asked } = recording(h, () => allowed);
    expect(await left(admitApiKey({ keyAdmission: admission, crypto: h.crypto })('esig_test_short', LIMITS))).toMatchObject({ _tag: 'Unauthenticated' });
    expect(asked).toEqual([]);
  });

  it('an unknown key, a revoked key, or a key answered without a decision is refused', async () => {
    const h = harness();
    const issued = await right(execute(h)(bootstrapKey(h)({ orgName: 'acme', mode: 'test', scopes: ['*'], name: 'k' })));
    const unknown = `esig_test_${'A'.repeat(40)}`;
    const withDecision = recording(h, (k) => (k === null || k.revokedAt !== null ? null : allowed)).admission;
    expect(await left(admitApiKey({ keyAdmission: withDecision, crypto: h.crypto })(unknown, LIMITS))).toMatchObject({ _tag: 'Unauthenticated' });
    // A store that found the key but charged nothing (it must not have: the key is live) is not trusted either.
    const noDecision = recording(h, () => null).admission;
    expect(await left(admitApiKey({ keyAdmission: noDecision, crypto: h.crypto })(issued.secret, LIMITS))).toMatchObject({ _tag: 'Unauthenticated' });
    await right(h.stores.apiKeys.revoke({ orgId: issued.org.id, mode: 'test' }, issued.key.id, h.clock.now().toISOString()));
    // A store that (wrongly) decided for a revoked key: the key's revocation still refuses it.
    const decidesAnyway = recording(h, () => allowed).admission;
    expect(await left(admitApiKey({ keyAdmission: decidesAnyway, crypto: h.crypto })(issued.secret, LIMITS))).toMatchObject({ _tag: 'Unauthenticated' });
  });
});
