import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_RATE_LIMIT_KEY: '10', ESIG_RATE_LIMIT_ORG: '15', ESIG_RATE_LIMIT_WINDOW_S: '3600' });
});
afterAll(async () => s.close());

describe('rate limits', () => {
  it('puts the headers on every response, errors and unauthenticated calls included', async () => {
    const k = await s.newKey('headers', 'test');
    for (const [path, key] of [['/api/v1/documents', k], ['/api/v1/nope', k], ['/api/v1/documents', null], ['/api/v1/openapi.json', null]] as const) {
      const r = await s.call('GET', path, { key });
      expect(r.headers.get('x-ratelimit-limit')).toMatch(/^\d+$/);
      expect(r.headers.get('x-ratelimit-remaining')).toMatch(/^\d+$/);
      expect(r.headers.get('x-ratelimit-reset')).toMatch(/^\d+$/);
      expect(r.headers.get('x-request-id')).toMatch(/^log_/);
    }
  });

  it('admits exactly the limit under concurrency, then 429 with Retry-After', async () => {
    const k = await s.newKey('burst', 'test');
    const results = await Promise.all(Array.from({ length: 30 }, () => s.call('GET', '/api/v1/documents', { key: k })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(10);
    const limited = results.filter((r) => r.status === 429);
    expect(limited).toHaveLength(20);
    for (const r of limited) {
      expect(r.body.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('x-ratelimit-remaining')).toBe('0');
    }
    const remaining = results.filter((r) => r.status === 200).map((r) => Number(r.headers.get('x-ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it('counts per organization across its keys', async () => {
    const a = await s.newKey('shared-org', 'test');
    const b = await s.newKey('shared-org', 'live');
    const fromA = await Promise.all(Array.from({ length: 10 }, () => s.call('GET', '/api/v1/documents', { key: a })));
    expect(fromA.every((r) => r.status === 200)).toBe(true);
    const fromB = await Promise.all(Array.from({ length: 10 }, () => s.call('GET', '/api/v1/documents', { key: b })));
    expect(fromB.filter((r) => r.status === 200)).toHaveLength(5);
    expect(fromB.filter((r) => r.status === 429)).toHaveLength(5);
    // Another org is unaffected.
    expect((await s.call('GET', '/api/v1/documents', { key: await s.newKey('elsewhere', 'test') })).status).toBe(200);
  });
});

describe('callers known only by their address', () => {
  let a: TestServer;
  beforeAll(async () => {
    a = await startTestServer({ ESIG_RATE_LIMIT_ADDRESS: '8', ESIG_RATE_LIMIT_WINDOW_S: '3600' });
  });
  afterAll(async () => a.close());

  const remaining = (r: Response | { headers: Headers }) => Number(r.headers.get('x-ratelimit-remaining'));
  const preflight = () =>
    fetch(`${a.url}/oauth/register`, { method: 'OPTIONS', headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' } });

  it('OAuth calls count once each, in the window keyless API calls use; preflights are free; past it, an OAuth-shaped 429 a browser can read', async () => {
    const register = () =>
      fetch(`${a.url}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ client_name: 'flood', redirect_uris: ['http://127.0.0.1/cb'] }) });
    // A path under /.well-known/ that the OAuth router does not serve is counted once, not again as an API call.
    const first = await fetch(`${a.url}/.well-known/openid-configuration`);
    const second = await fetch(`${a.url}/.well-known/openid-configuration`);
    expect(second.status).toBe(404);
    expect(remaining(second)).toBe(remaining(first) - 1);
    const keyless = await a.call('GET', '/api/v1/documents', { key: null });
    expect(keyless.status).toBe(401);
    expect(keyless.headers.get('x-ratelimit-limit')).toBe('8');
    expect(remaining(keyless)).toBe(remaining(second) - 1);
    expect((await preflight()).status).toBe(204);
    // What the keyless call left (the harness's own calls at start count too) is what registration gets.
    const left = remaining(keyless);
    expect(left).toBeGreaterThanOrEqual(2);
    const admitted = await Promise.all(Array.from({ length: left }, register));
    expect(admitted.map((r) => r.status)).toEqual(Array.from({ length: left }, () => 201));
    expect(admitted.map((r) => remaining(r)).sort()).toEqual(Array.from({ length: left }, (_, i) => i));
    const refused = await register();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.headers.get('access-control-allow-origin')).toBe('*');
    expect(refused.headers.get('access-control-expose-headers')).toContain('Retry-After');
    expect(await refused.json()).toMatchObject({ error: 'temporarily_unavailable' });
    const pre = await preflight();
    expect(pre.status).toBe(204);
    expect(pre.headers.get('access-control-allow-origin')).toBe('*');
    const token = await fetch(`${a.url}/oauth/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'grant_type=authorization_code&code=x&client_id=https://vendor.example/c.json' });
    expect(token.status).toBe(429);
    expect((await a.call('GET', '/api/v1/documents', { key: null })).status).toBe(429);
    // A caller with a key has windows of its own.
    expect((await a.call('GET', '/api/v1/documents', { key: await a.newKey('keyed', 'test') })).status).toBe(200);
  });
});
