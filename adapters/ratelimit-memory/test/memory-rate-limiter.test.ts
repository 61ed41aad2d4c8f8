import { composeKeyAdmission } from '@esig/core';
import { createManualClock, createMemoryStores } from '@esig/testkit';
import { describeKeyAdmissionContract } from '@esig/testkit/key-admission-contract';
import { describeRateLimiterContract } from '@esig/testkit/rate-limiter-contract';
import { describe, expect, it } from 'vitest';
import { createMemoryRateLimiter } from '../src/index.js';

// One process, one state: the suite's "two connections" are the same limiter.
describeRateLimiterContract('in memory', (windowMs, clock) => {
  const limiter = createMemoryRateLimiter(clock, windowMs);
  return [limiter, limiter];
});

// The two-step KeyAdmission the SQLite server uses: keys from a store, calls counted by this limiter.
describeKeyAdmissionContract('composed: an ApiKeyStore and the in-memory limiter', (windowMs, clock) => {
  const rateLimiter = createMemoryRateLimiter(clock, windowMs);
  const { apiKeys } = createMemoryStores().stores;
  return { apiKeys, rateLimiter, admissions: [composeKeyAdmission(apiKeys, rateLimiter)] };
});

describe('createMemoryRateLimiter', () => {
  it('forgets buckets idle for a whole window, and counts them afresh afterwards', async () => {
    const clock = createManualClock('2026-01-01T00:00:00.000Z');
    const limiter = createMemoryRateLimiter(clock, 1_000);
    const b = [{ id: 'key_1', limit: 2 }];
    expect((await limiter.consume(b)()).remaining).toBe(1);
    expect((await limiter.consume(b)()).remaining).toBe(0);
    expect((await limiter.consume(b)()).allowed).toBe(false);
    clock.advance(2_500);
    // Another bucket's call triggers the sweep; key_1 starts a fresh window.
    await limiter.consume([{ id: 'key_2', limit: 2 }])();
    expect(await limiter.consume(b)()).toMatchObject({ allowed: true, remaining: 1, resetS: 1 });
  });
});
