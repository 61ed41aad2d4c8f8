import fc from 'fast-check';
import { inspect, isDeepStrictEqual } from 'node:util';
import { describe, expect, it } from 'vitest';
import type { StoreBuilders, Stores } from '@esig/core';
import { STORE_READS, lazyStores, noticingNewJobs } from '@esig/core';
import { TENANT_A, createMemoryStores, makeJob, ok } from '@esig/testkit';

const PORTS = Object.keys(STORE_READS) as Array<keyof Stores>;

/** Builders over one plain set of stores that count how often each port was built, and from what. */
const counting = (base: Stores) => {
  const built = new Map<keyof Stores, number>();
  const contexts: unknown[] = [];
  const builders = Object.fromEntries(
    PORTS.map((port) => [
      port,
      (context: unknown) => {
        built.set(port, (built.get(port) ?? 0) + 1);
        contexts.push(context);
        return base[port];
      },
    ]),
  ) as unknown as StoreBuilders<string>;
  return { builders, built, contexts };
};

describe('lazyStores', () => {
  it('builds a port the first time it is read, from the context given, once, and no other port', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PORTS), { maxLength: 40 }), (reads) => {
        const base = createMemoryStores().stores;
        const { builders, built, contexts } = counting(base);
        const stores = lazyStores(builders, 'the connection');
        for (const port of reads) expect(stores[port]).toBe(base[port]);
        expect([...built.keys()].sort()).toEqual([...new Set(reads)].sort());
        for (const n of built.values()) expect(n).toBe(1);
        expect(new Set(contexts)).toEqual(new Set(reads.length === 0 ? [] : ['the connection']));
      }),
    );
  });

  it('keeps two sets apart: each builds its own ports from its own context', () => {
    const base = createMemoryStores().stores;
    const { builders, contexts } = counting(base);
    const a = lazyStores(builders, 'a');
    const b = lazyStores(builders, 'b');
    void a.documents;
    void b.documents;
    void a.documents;
    expect(contexts).toEqual(['a', 'b']);
  });

  it('lists every port as an own, enumerable key, and a spread or Object.entries builds them all', () => {
    const base = createMemoryStores().stores;
    const { builders, built } = counting(base);
    const stores = lazyStores(builders, 'c');
    expect(Object.keys(stores).sort()).toEqual([...PORTS].sort());
    expect(built.size).toBe(0);
    const spread = { ...stores };
    expect(built.size).toBe(PORTS.length);
    for (const port of PORTS) expect(spread[port]).toBe(base[port]);
    expect(Object.fromEntries(Object.entries(stores))).toEqual(spread);
  });

  it('is read-only: assigning, defining or deleting a port throws and changes nothing', () => {
    const base = createMemoryStores().stores;
    const { builders } = counting(base);
    const stores = lazyStores(builders, 'd') as unknown as Record<string, unknown>;
    expect(() => {
      stores.documents = 'replaced';
    }).toThrow(TypeError);
    expect(() => Object.defineProperty(stores, 'jobs', { value: 'replaced' })).toThrow(TypeError);
    expect(() => delete stores.apiLog).toThrow(TypeError);
    expect(() => {
      stores.somethingNew = 1;
    }).toThrow(TypeError);
    expect(stores.documents).toBe(base.documents);
    expect(stores.jobs).toBe(base.jobs);
    expect(stores.apiLog).toBe(base.apiLog);
    expect('somethingNew' in stores).toBe(false);
  });

  it('answers like a plain object of ports: `in`, descriptors (building nothing), no other keys, not a thenable', async () => {
    const base = createMemoryStores().stores;
    const { builders, built } = counting(base);
    const stores = lazyStores(builders, 'e');
    for (const port of PORTS) expect(port in stores).toBe(true);
    expect('then' in stores).toBe(false);
    expect((stores as unknown as Record<string, unknown>).then).toBeUndefined();
    expect((stores as unknown as Record<symbol, unknown>)[Symbol.iterator]).toBeUndefined();
    const d = Object.getOwnPropertyDescriptor(stores, 'documents')!;
    expect(d).toMatchObject({ enumerable: true, configurable: true });
    expect(Object.getOwnPropertyDescriptor(stores, 'nothing')).toBeUndefined();
    expect(built.size).toBe(0);
    expect(d.get!.call(stores)).toBe(base.documents);
    expect([...built.keys()]).toEqual(['documents']);
    // A set can be the value of a promise (an async function returning it): nothing takes it for a thenable.
    expect(await Promise.resolve(stores)).toBe(stores);
    expect(Object.getPrototypeOf(stores)).toBe(Object.prototype);
  });

  it('reads like a plain object where a name is not a port: String(), hasOwnProperty, constructor, equality', () => {
    const base = createMemoryStores().stores;
    const { builders } = counting(base);
    const stores = lazyStores(builders, 'f');
    expect(String(stores)).toBe('[object Object]');
    expect(`${stores as unknown as string}`).toBe('[object Object]');
    expect(stores.hasOwnProperty('documents')).toBe(true);
    expect(stores.hasOwnProperty('toString')).toBe(false);
    expect('toString' in stores).toBe(true);
    expect(stores.constructor).toBe(Object);
    expect(stores).toStrictEqual({ ...stores });
    expect(isDeepStrictEqual(stores, { ...stores })).toBe(true);
    // Inherited from, it lends its ports.
    expect((Object.create(stores) as Stores).jobs).toBe(base.jobs);
  });

  it('shows its ports when inspected, never the context it was built from (a connection)', () => {
    const base = createMemoryStores().stores;
    const { builders } = counting(base);
    const shown = inspect(lazyStores(builders, 'postgres://esig:hunter2@db/esig'));
    expect(shown).not.toContain('hunter2');
    for (const port of PORTS) expect(shown).toContain(port);
  });

  it('copied through its descriptors, reads the ports of the set it came from', () => {
    const base = createMemoryStores().stores;
    const { builders, built } = counting(base);
    const stores = lazyStores(builders, 'g');
    const copy = Object.defineProperties({}, Object.getOwnPropertyDescriptors(stores)) as Stores;
    expect(built.size).toBe(0);
    expect(copy.documents).toBe(base.documents);
    expect([...built.keys()]).toEqual(['documents']);
  });

  it('refuses to be frozen, sealed or given another prototype, with an error that says why', () => {
    const base = createMemoryStores().stores;
    const { builders } = counting(base);
    const stores = lazyStores(builders, 'h');
    expect(() => Object.freeze(stores)).toThrow(/read-only.*\{ \.\.\.stores \}/);
    expect(() => Object.seal(stores)).toThrow(TypeError);
    expect(() => Object.preventExtensions(stores)).toThrow(TypeError);
    expect(() => Object.setPrototypeOf(stores, null)).toThrow(TypeError);
    expect(Object.isFrozen(Object.freeze({ ...stores }))).toBe(true);
  });
});

describe('noticingNewJobs over a lazy set', () => {
  it('builds only the ports read through it, and still notices an enqueued job', async () => {
    const base = createMemoryStores().stores;
    const { builders, built } = counting(base);
    const noticed: string[] = [];
    const tx = noticingNewJobs(lazyStores(builders, 'tx'), (kind) => noticed.push(kind));
    expect(built.size).toBe(0);
    expect(tx.documents).toBe(base.documents);
    expect([...built.keys()]).toEqual(['documents']);
    const job = makeJob(TENANT_A);
    expect(await ok(tx.jobs.enqueue(job))).toBe(true);
    expect(noticed).toEqual([job.kind]);
    expect([...built.keys()].sort()).toEqual(['documents', 'jobs']);
  });
});
