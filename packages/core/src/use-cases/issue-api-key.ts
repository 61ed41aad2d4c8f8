import type { ApiKey } from '../model/api-key.js';
import type { GrantedScope } from '../model/scopes.js';
import type { Mode } from '../model/tenant.js';
import type { Clock } from '../ports/clock.js';
import type { Crypto } from '../ports/crypto.js';
import type { IdGenerator } from '../ports/id-generator.js';

export interface IssuedKey {
  readonly key: ApiKey;
  /** The clear secret: returned once, at creation, and never stored. */
  readonly secret: string;
}

/** Mints a key record and its secret (32 random alphanumerics ≈ 190 bits after the mode prefix). */
export const issueApiKey = (
  deps: { readonly clock: Clock; readonly ids: IdGenerator; readonly crypto: Crypto },
  input: { readonly orgId: string; readonly mode: Mode; readonly name: string; readonly scopes: readonly GrantedScope[] },
): IssuedKey => {
  const secret = `esig_${input.mode}_${deps.crypto.randomAlphanumeric(32)}`;
  return {
    secret,
    key: {
      id: deps.ids.next('key'),
      orgId: input.orgId,
      mode: input.mode,
      name: input.name,
      prefix: secret.slice(0, 14),
      secretHash: deps.crypto.sha256Hex(secret),
      scopes: [...new Set(input.scopes)],
      createdAt: deps.clock.now().toISOString(),
      revokedAt: null,
    },
  };
};
