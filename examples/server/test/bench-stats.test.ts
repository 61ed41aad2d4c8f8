import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { adjacentPairs, buildFingerprint, describeBuilds, pairedComparison } from '../../../bench/lib.js';

// The pair benches' verdicts: a sign test over adjacent rounds, and a fingerprint of what each side ran.

const pairs = (lower: number, higher: number): Array<readonly [number, number]> => [
  ...Array.from({ length: lower }, () => [1, 2] as const),
  ...Array.from({ length: higher }, () => [2, 1] as const),
];

describe('adjacentPairs', () => {
  it("pairs the rounds as they ran, this build's value first whichever ran first", () => {
    const rounds = [
      { side: 'this', v: 1 },
      { side: 'other', v: 2 },
      { side: 'other', v: 3 },
      { side: 'this', v: 4 },
      { side: 'this', v: 5 },
    ];
    expect(adjacentPairs(rounds, (r) => r.side === 'this', (r) => r.v)).toEqual([
      [1, 2],
      [4, 3],
    ]);
  });
});

describe('pairedComparison', () => {
  it('gives the two-sided exact sign test of the count', () => {
    // 6 of 8: 2 × (1 + 8 + 28) / 256.
    expect(pairedComparison(pairs(6, 2)).p).toBeCloseTo(74 / 256, 10);
    // 11 of 12: 2 × (1 + 12) / 4096.
    expect(pairedComparison(pairs(11, 1)).p).toBeCloseTo(26 / 4096, 10);
    expect(pairedComparison(pairs(6, 0)).p).toBeCloseTo(2 / 64, 10);
    expect(pairedComparison(pairs(4, 4)).p).toBe(1);
    expect(pairedComparison(pairs(6, 2)).lower).toBe(6);
  });

  it('leaves ties out of the test', () => {
    const c = pairedComparison([[1, 1], [1, 2], [1, 2], [3, 3]]);
    expect(c.lower).toBe(2);
    expect(c.n).toBe(4);
    // Two untied pairs, both lower: 2 × 1/4.
    expect(c.p).toBeCloseTo(0.5, 10);
    expect(pairedComparison([[1, 1]]).p).toBe(1);
  });

  it('gives the median of the ratios', () => {
    expect(pairedComparison([[1, 2], [3, 3], [9, 3]]).medianRatio).toBe(1);
    expect(pairedComparison([[0.9, 1], [0.8, 1], [1.2, 1], [0.95, 1], [0.7, 1]]).medianRatio).toBeCloseTo(0.9, 10);
  });

  it('is the same test whichever side is called mine, and never outside (0, 1]', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 5 })), { minLength: 1, maxLength: 40 }), (ps) => {
        const a = pairedComparison(ps);
        const b = pairedComparison(ps.map(([x, y]) => [y, x] as const));
        expect(a.p).toBeCloseTo(b.p, 12);
        expect(a.p).toBeGreaterThan(0);
        expect(a.p).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });
});

describe('buildFingerprint', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });
  const checkout = (files: Record<string, string>) => {
    const root = mkdtempSync(join(tmpdir(), 'esig-fingerprint-'));
    dirs.push(root);
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  };
  const built = {
    'packages/core/dist/index.js': 'export const a = 1;',
    'adapters/store-sqlite/dist/jobs.js': 'export const claim = 2;',
    'examples/server/dist/main.js': 'run();',
  };

  it('is the same for two checkouts of the same build, wherever they are', () => {
    const a = checkout(built);
    const b = checkout({ ...built, 'packages/core/src/index.ts': 'source is not what runs', 'packages/core/node_modules/x/dist/y.js': 'nor a dependency' });
    expect(buildFingerprint(a)).toBe(buildFingerprint(b));
    expect(buildFingerprint(a)).toMatch(/^[0-9a-f]{12} \(3 files\)$/);
    expect(describeBuilds({ this: a, other: b })).toContain('the two builds are the same');
  });

  it('tells a compiled file edited by hand', () => {
    const a = checkout(built);
    const b = checkout({ ...built, 'adapters/store-sqlite/dist/jobs.js': 'export const claim = 3;' });
    expect(buildFingerprint(a)).not.toBe(buildFingerprint(b));
    expect(describeBuilds({ this: a, other: b })).not.toContain('the same');
  });

  it('tells a compiled file moved or added', () => {
    const a = checkout(built);
    const moved = checkout({ ...built, 'packages/core/dist/index.js': '', 'packages/core/dist/other.js': 'export const a = 1;' });
    const added = checkout({ ...built, 'packages/core/dist/extra.js': '' });
    expect(new Set([buildFingerprint(a), buildFingerprint(moved), buildFingerprint(added)]).size).toBe(3);
  });
});
