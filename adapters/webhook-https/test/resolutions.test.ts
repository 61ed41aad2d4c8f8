import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reusedResolutions } from '../src/resolutions.js';

/** A resolver that answers `<host>@<time>`, so an answer says when it was given, and counts its calls. */
const stamping = (clock: { t: number }) => {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return [`${host}@${clock.t}`];
  };
  return { calls, resolve };
};

describe('reusedResolutions', () => {
  it('reuses an answer for maxAgeMs, then asks again', async () => {
    const clock = { t: 0 };
    const { calls, resolve } = stamping(clock);
    const r = reusedResolutions(resolve, 1_000, () => clock.t);
    expect(await r('a.test')).toEqual(['a.test@0']);
    clock.t = 999;
    expect(await r('a.test')).toEqual(['a.test@0']);
    expect(await r('b.test')).toEqual(['b.test@999']);
    clock.t = 1_000;
    expect(await r('a.test')).toEqual(['a.test@1000']);
    expect(calls).toEqual(['a.test', 'b.test', 'a.test']);
  });

  it('treats an answer dated after the clock (a clock set back) as expired', async () => {
    const clock = { t: 5_000 };
    const { calls, resolve } = stamping(clock);
    const r = reusedResolutions(resolve, 1_000, () => clock.t);
    await r('a.test');
    clock.t = 4_000;
    expect(await r('a.test')).toEqual(['a.test@4000']);
    expect(calls).toHaveLength(2);
  });

  it('shares one resolution among the requests that arrive while it runs', async () => {
    let release: (a: readonly string[]) => void = () => undefined;
    let calls = 0;
    const r = reusedResolutions(
      () => {
        calls++;
        return new Promise((settle) => (release = settle));
      },
      1_000,
      () => 0,
    );
    const all = Promise.all([r('a.test'), r('a.test'), r('a.test')]);
    // The resolver is called on the next microtask turn.
    await Promise.resolve();
    release(['192.0.2.1']);
    expect(await all).toEqual([['192.0.2.1'], ['192.0.2.1'], ['192.0.2.1']]);
    expect(calls).toBe(1);
  });

  it('never reuses a failure, whether the resolver rejects or throws', async () => {
    const outcomes: Array<() => Promise<readonly string[]>> = [
      () => Promise.reject(new Error('ENOTFOUND a.test')),
      () => {
        throw new Error('resolver bug');
      },
      async () => ['192.0.2.1'],
    ];
    let calls = 0;
    const r = reusedResolutions(() => (outcomes[calls++] as () => Promise<readonly string[]>)(), 1_000, () => 0);
    await expect(r('a.test')).rejects.toThrow(/ENOTFOUND/);
    await expect(r('a.test')).rejects.toThrow(/resolver bug/);
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    expect(calls).toBe(3);
  });

  it('shares a resolution that hangs only while it is young: after maxAgeMs a request asks again', async () => {
    const clock = { t: 0 };
    let calls = 0;
    const r = reusedResolutions(
      () => {
        calls++;
        return calls === 1 ? new Promise(() => undefined) : Promise.resolve(['192.0.2.1']);
      },
      1_000,
      () => clock.t,
    );
    void r('a.test');
    clock.t = 999;
    void r('a.test');
    await Promise.resolve();
    expect(calls).toBe(1);
    clock.t = 1_000;
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    expect(calls).toBe(2);
  });

  it('keeps a late answer of a lookup that was replaced from overwriting the newer one', async () => {
    const clock = { t: 0 };
    const releases: Array<(a: readonly string[]) => void> = [];
    const r = reusedResolutions(() => new Promise((settle) => releases.push(settle)), 1_000, () => clock.t);
    const first = r('a.test');
    clock.t = 1_500;
    const second = r('a.test');
    await Promise.resolve();
    expect(releases).toHaveLength(2);
    (releases[1] as (a: readonly string[]) => void)(['203.0.113.2']);
    expect(await second).toEqual(['203.0.113.2']);
    (releases[0] as (a: readonly string[]) => void)(['203.0.113.1']);
    expect(await first).toEqual(['203.0.113.1']);
    clock.t = 1_600;
    const third = r('a.test');
    await Promise.resolve();
    expect(releases).toHaveLength(2);
    expect(await third).toEqual(['203.0.113.2']);
  });

  it('dates an answer from when it was asked, so a slow one is reused for the rest of the window only', async () => {
    const clock = { t: 0 };
    let release: (a: readonly string[]) => void = () => undefined;
    let calls = 0;
    const r = reusedResolutions(
      () => {
        calls++;
        return calls === 1 ? new Promise((settle) => (release = settle)) : Promise.resolve(['192.0.2.2']);
      },
      1_000,
      () => clock.t,
    );
    const slow = r('a.test');
    await Promise.resolve();
    clock.t = 800;
    release(['192.0.2.1']);
    expect(await slow).toEqual(['192.0.2.1']);
    clock.t = 999;
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    clock.t = 1_000;
    expect(await r('a.test')).toEqual(['192.0.2.2']);
    expect(calls).toBe(2);
  });

  it('never reuses an empty answer, which the check treats as a failure', async () => {
    let calls = 0;
    const r = reusedResolutions(async () => (calls++ === 0 ? [] : ['192.0.2.1']), 1_000, () => 0);
    expect(await r('a.test')).toEqual([]);
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    expect(await r('a.test')).toEqual(['192.0.2.1']);
    expect(calls).toBe(2);
  });

  it('remembers 1,024 names at most, forgetting the oldest first', async () => {
    const clock = { t: 0 };
    const { calls, resolve } = stamping(clock);
    const r = reusedResolutions(resolve, 1_000, () => clock.t);
    for (let i = 0; i <= 1_024; i++) await r(`h${i}.test`);
    expect(calls).toHaveLength(1_025);
    await r('h1024.test');
    await r('h1.test');
    expect(calls).toHaveLength(1_025);
    await r('h0.test');
    expect(calls).toHaveLength(1_026);
  });

  it('with maxAgeMs 0, is the resolver itself', () => {
    const resolve = async () => ['192.0.2.1'];
    expect(reusedResolutions(resolve, 0, () => 0)).toBe(resolve);
  });

  it('never returns an answer older than maxAgeMs, nor resolves a name whose answer is young (property)', async () => {
    const step = fc.record({ host: fc.constantFrom('a.test', 'b.test', 'c.test'), advance: fc.integer({ min: 0, max: 700 }) });
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 2_000 }), fc.array(step, { maxLength: 40 }), async (maxAge, steps) => {
        const clock = { t: 0 };
        const { calls, resolve } = stamping(clock);
        const r = reusedResolutions(resolve, maxAge, () => clock.t);
        const answeredAt = new Map<string, number>();
        for (const { host, advance } of steps) {
          clock.t += advance;
          const before = calls.length;
          const [answer] = await r(host);
          const at = Number((answer as string).split('@')[1]);
          expect(clock.t - at).toBeLessThan(maxAge);
          const last = answeredAt.get(host);
          // Asked again exactly when there was no answer, or it had aged out.
          expect(calls.length - before).toBe(last === undefined || clock.t - last >= maxAge ? 1 : 0);
          answeredAt.set(host, at);
        }
      }),
    );
  });
});
