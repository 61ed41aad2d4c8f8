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
