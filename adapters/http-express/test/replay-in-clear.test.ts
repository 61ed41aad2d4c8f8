import type * as t from 'io-ts';
import { describe, expect, it } from 'vitest';
import type { EsigHttpDeps } from '../src/deps.js';
import { buildRoutes } from '../src/routes.js';

const routes = buildRoutes({} as EsigHttpDeps, { publicUrl: 'http://esig.test', embedSessionTtlS: 300 });

/** Every property name a codec can produce, however deeply nested (objects, arrays, unions, intersections). */
const propertyNames = (codec: t.Mixed, seen = new Set<t.Mixed>()): string[] => {
  if (seen.has(codec)) return [];
  seen.add(codec);
  const c = codec as t.Mixed & { props?: Record<string, t.Mixed>; types?: t.Mixed[]; type?: t.Mixed; codomain?: t.Mixed };
  return [
    ...Object.entries(c.props ?? {}).flatMap(([k, v]) => [k, ...propertyNames(v, seen)]),
    ...(c.types ?? []).flatMap((x) => propertyNames(x, seen)),
    ...(c.type !== undefined && typeof c.type === 'object' ? propertyNames(c.type, seen) : []),
    ...(c.codomain !== undefined ? propertyNames(c.codomain, seen) : []),
  ];
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
