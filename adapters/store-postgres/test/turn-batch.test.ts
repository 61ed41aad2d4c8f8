import { describe, expect, it } from 'vitest';
import { turnBatcher } from '../src/turn-batch.js';

describe('turnBatcher', () => {
  it('answers the calls of one turn together, in call order, and those of a later turn in a batch of their own', async () => {
    const batches: Array<readonly number[]> = [];
    const double = turnBatcher(async (wants: readonly number[]) => {
      batches.push(wants);
      return wants.map((w) => w * 2);
    });
    // Calls made from promise callbacks of the same turn join the batch too.
    const first = Promise.all([double(1), Promise.resolve().then(() => double(2)), double(3)]);
    expect(await first).toEqual([2, 4, 6]);
    expect(await double(4)).toBe(8);
    expect(batches).toEqual([[1, 3, 2], [4]]);
  });

  it('fails every call of a batch whose answer fails, throws, or answers fewer, and goes on with the next batch', async () => {
    let mode: 'reject' | 'throw' | 'short' | 'ok' = 'reject';
    const echo = turnBatcher((wants: readonly string[]): Promise<readonly string[]> => {
      if (mode === 'throw') throw new Error('thrown');
      if (mode === 'reject') return Promise.reject(new Error('rejected'));
      return Promise.resolve(mode === 'short' ? wants.slice(1) : wants);
    });
    const outcomes = (calls: Array<Promise<string>>) => Promise.allSettled(calls).then((rs) => rs.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message)));
    expect(await outcomes([echo('a'), echo('b')])).toEqual(['rejected', 'rejected']);
    mode = 'throw';
    expect(await outcomes([echo('a'), echo('b')])).toEqual(['thrown', 'thrown']);
    mode = 'short';
    expect(await outcomes([echo('a'), echo('b')])).toEqual(['a batch of 2 got 1 answers', 'a batch of 2 got 1 answers']);
    mode = 'ok';
    expect(await outcomes([echo('a'), echo('b')])).toEqual(['a', 'b']);
  });
});
