import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';

// A load balancer's probes come from one address, behind a proxy the same address as every keyless caller (signers,
// OAuth clients): counted in that address's window, they were answered 429 once the signers had used it up, and the
// instance was taken out of service for being busy.
let s: TestServer;
beforeAll(async () => {
  s = await startTestServer({ ESIG_RATE_LIMIT_ADDRESS: '6' });
}, 60_000);
afterAll(async () => {
  await s?.close();
}, 30_000);

describe('health probes', () => {
  it('are answered whatever the address’s window holds, and take nothing from it', async () => {
    const remaining = async () => {
      const r = await s.call('GET', '/api/v1/openapi.json', { key: null });
      return r.status === 429 ? -1 : Number(r.headers.get('x-ratelimit-remaining'));
    };
    const before = await remaining();
    expect(before).toBeGreaterThan(0);
    for (let i = 0; i < 10; i++) {
      expect((await s.call('GET', '/healthz', { key: null })).status).toBe(200);
      expect((await s.call('GET', '/readyz', { key: null })).body).toEqual({ status: 'ready' });
    }
    // Ten probes later the window has lost only the one keyless call made since.
    expect(await remaining()).toBe(before - 1);
    // Used up by keyless calls, it still lets the probes through.
    while ((await remaining()) >= 0);
    expect((await s.call('GET', '/healthz', { key: null })).status).toBe(200);
    expect((await s.call('GET', '/readyz', { key: null })).status).toBe(200);
  });
});
