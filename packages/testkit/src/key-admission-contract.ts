import { randomBytes } from 'node:crypto';
import type { ApiKey, ApiKeyStore, Clock, KeyAdmission, KeyLimits, RateLimiter } from '@esig/core';
import * as E from 'fp-ts/lib/Either.js';
import { describe, expect, it } from 'vitest';
import { at, makeApiKey } from './builders.js';
import type { ManualClock } from './fakes.js';
import { createManualClock } from './fakes.js';

/** What the suite runs against: where keys live, and admissions and a rate limiter over one set of windows. */
export interface KeyAdmissionHarness {
  readonly apiKeys: ApiKeyStore;
  /** Each on its own connection where the adapter has connections (two processes on one database, say). */
  readonly admissions: readonly KeyAdmission[];
  /** A RateLimiter over the same windows (the server charges OAuth access tokens through it). */
  readonly rateLimiter: RateLimiter;
}

/** Opens the harness with windows of `windowMs`, time from `clock`. */
export type OpenKeyAdmission = (windowMs: number, clock: Clock) => KeyAdmissionHarness;

let runs = 0;
/** Each test a day after the previous one, so that windows left over by earlier tests never count. */
const freshClock = (): ManualClock => createManualClock(new Date(Date.parse('2026-03-01T00:00:00.000Z') + runs++ * 86_400_000));
const freshTenant = () => ({ orgId: `org_${randomBytes(6).toString('hex')}`, mode: 'test' as const });

const ok = async <A>(te: () => Promise<E.Either<unknown, A>>): Promise<A> => {
  const r = await te();
  if (E.isLeft(r)) throw new Error(`expected Right, got ${JSON.stringify(r.left)}`);
  return r.right;
};

/**
 * The KeyAdmission port's contract (ports/key-admission.ts): the key found by its secret hash, its call
 * counted against `key:<id>` and `org:<orgId>` only when it may be used, in the same windows as the rate
 * limiter, never over a limit under concurrent calls.
 */
export const describeKeyAdmissionContract = (adapterName: string, open: OpenKeyAdmission): void => {
  describe(`key admission contract: ${adapterName}`, () => {
    const setUp = async (limits: KeyLimits) => {
      const clock = freshClock();
      const h = open(60_000, clock);
      const tenant = freshTenant();
      let i = 0;
      const admit = (key: ApiKey | string) => h.admissions[i++ % h.admissions.length]!.admit(typeof key === 'string' ? key : key.secretHash, limits);
      const newKey = async () => {
        const key = makeApiKey(tenant, { secretHash: randomBytes(32).toString('hex') });
        await ok(h.apiKeys.insert(key));
        return key;
      };
      return { h, clock, tenant, admit, newKey };
    };

    it('an unknown secret hash finds no key and counts nothing', async () => {
      const { admit } = await setUp({ perKey: 5, perOrg: 5 });
      expect(await ok(admit(randomBytes(32).toString('hex')))).toEqual({ key: null, decision: null });
    });

    it("a live key is found and its calls counted against its own limit, exactly, with what is left", async () => {
      const { admit, newKey } = await setUp({ perKey: 3, perOrg: 100 });
      const key = await newKey();
      const seen = [];
      for (let i = 0; i < 4; i++) seen.push(await ok(admit(key)));
      expect(seen.map((s) => s.key)).toEqual([key, key, key, key]);
      expect(seen.map((s) => [s.decision?.allowed, s.decision?.remaining, s.decision?.limit])).toEqual([
        [true, 2, 3],
        [true, 1, 3],
        [true, 0, 3],
        [false, 0, 3],
      ]);
      expect(seen[3]!.decision).toMatchObject({ retryAfterS: 60 });
    });

    it("the keys of one organization share its limit", async () => {
      const { admit, newKey } = await setUp({ perKey: 10, perOrg: 3 });
      const [a, b] = [await newKey(), await newKey()];
      expect((await ok(admit(a))).decision?.allowed).toBe(true);
      expect((await ok(admit(b))).decision?.allowed).toBe(true);
      expect((await ok(admit(a))).decision).toMatchObject({ allowed: true, remaining: 0, limit: 3 });
      expect((await ok(admit(b))).decision).toMatchObject({ allowed: false, limit: 3 });
    });

    it('a revoked key is found as revoked and counts nothing: it cannot use up its organization\'s limit', async () => {
      const { h, admit, newKey, tenant } = await setUp({ perKey: 10, perOrg: 2 });
      const stolen = await newKey();
      const good = await newKey();
      await ok(h.apiKeys.revoke(tenant, stolen.id, at(5)));
      for (let i = 0; i < 5; i++) {
        const r = await ok(admit(stolen));
        expect(r.decision).toBeNull();
        expect(r.key).toMatchObject({ id: stolen.id, revokedAt: at(5) });
      }
      expect((await ok(admit(good))).decision).toMatchObject({ allowed: true, remaining: 1 });
      expect((await ok(admit(good))).decision).toMatchObject({ allowed: true, remaining: 0 });
    });

    it("counts in the rate limiter's windows: calls charged through either show in the other", async () => {
      const { h, admit, newKey, tenant } = await setUp({ perKey: 10, perOrg: 3 });
      const key = await newKey();
      // An OAuth access token of the same organization, charged through the rate limiter.
      expect((await h.rateLimiter.consume([{ id: 'grant:g1', limit: 10 }, { id: `org:${tenant.orgId}`, limit: 3 }])()).remaining).toBe(2);
      expect((await ok(admit(key))).decision).toMatchObject({ allowed: true, remaining: 1 });
      expect((await h.rateLimiter.consume([{ id: `key:${key.id}`, limit: 10 }])()).remaining).toBe(8);
      expect((await ok(admit(key))).decision).toMatchObject({ allowed: true, remaining: 0 });
      expect((await h.rateLimiter.consume([{ id: `org:${tenant.orgId}`, limit: 3 }])()).allowed).toBe(false);
    });

    it('never admits over the limit under concurrent calls, and the window slides', async () => {
      const { admit, newKey, clock } = await setUp({ perKey: 7, perOrg: 100 });
      const key = await newKey();
      const all = await Promise.all(Array.from({ length: 20 }, () => ok(admit(key))));
      expect(all.filter((r) => r.decision?.allowed)).toHaveLength(7);
      expect(all.filter((r) => r.decision?.allowed).map((r) => r.decision!.remaining).sort((x, y) => x - y)).toEqual([0, 1, 2, 3, 4, 5, 6]);
      clock.advance(60_000);
      expect((await ok(admit(key))).decision).toMatchObject({ allowed: true, remaining: 6 });
    });
  });
};
