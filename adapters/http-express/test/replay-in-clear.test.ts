import type * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import type { EsigHttpDeps } from '../src/deps.js';
import { buildRoutes } from '../src/routes.js';
import { toJsonSchema } from '../src/schema.js';

const routes = buildRoutes({} as EsigHttpDeps, { publicUrl: 'http://esig.test', embedSessionTtlS: 300 });

/**
 * Every property name of a response, however deeply nested, read off its JSON Schema (`toJsonSchema`, as the
 * OpenAPI document shows it to clients).
 */
const propertyNames = (codec: t.Mixed): string[] => {
  const walk = (s: unknown): string[] =>
    Array.isArray(s)
      ? s.flatMap(walk)
      : s !== null && typeof s === 'object'
        ? Object.entries(s).flatMap(([k, v]) => (k === 'properties' && v !== null && typeof v === 'object' ? [...Object.keys(v), ...walk(Object.values(v))] : walk(v)))
        : [];
  return walk(toJsonSchema(codec));
};

/** What a secret shown once may be called in a response: a key, a webhook secret, a URL, link or code to sign with. */
const SECRET_LIKE = /secret|token|url|link|href|code|otp|pin|pass|credential|key$/i;

describe('responses kept in clear for replay', () => {
  const inClear = routes.filter((r) => r.kind === 'write' && r.replayInClear === true);

  it('are those of the routes that answer with a resource of the signing flow, and no others', () => {
    // A route added to this list must show nothing secret: see the next test, and WriteRoute.replayInClear.
    expect(inClear.map((r) => r.operationId).sort()).toEqual(
      ['addField', 'addRecipient', 'cancelSignatureRequest', 'createSignatureRequest', 'remindSignatureRequest', 'sendSignatureRequest', 'uploadDocument'].sort(),
    );
  });

  it('hold no field named like a secret, while every route that answers one stays sealed', () => {
    for (const r of inClear) {
      const names = propertyNames(r.response.codec!);
      expect(names.length, r.operationId).toBeGreaterThan(3);
      expect(names.filter((n) => SECRET_LIKE.test(n)), r.operationId).toEqual([]);
    }
    // The check can see a secret: each route that answers one has a field it names.
    const answersSecret = routes.filter((r) => r.kind === 'write' && r.response.codec !== undefined && propertyNames(r.response.codec).some((n) => SECRET_LIKE.test(n)));
    expect(answersSecret.map((r) => r.operationId)).toEqual(expect.arrayContaining(['createApiKey', 'createWebhookEndpoint', 'rotateWebhookSecret', 'createEmbeddedSession']));
    for (const r of answersSecret) expect(r.kind === 'write' && r.replayInClear, r.operationId).not.toBe(true);
  });
});
