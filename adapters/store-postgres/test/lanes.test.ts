import { describe, expect, it } from 'vitest';
import { createLanes } from '../src/lanes.js';

/** A `run` whose batches the test answers by hand. */
const controlled = () => {
  const batches: { items: readonly number[]; answer: (r: readonly string[]) => void; fail: (e: unknown) => void }[] = [];
  const run = (items: readonly number[]) =>
    new Promise<readonly string[]>((answer, fail) => {
      batches.push({ items, answer, fail });
    });
  return { batches, run };
};
const settled = <A>(p: Promise<A>) => p.then((value) => ({ value }), (error: unknown) => ({ error }));
const turn = () => new Promise<void>((r) => setImmediate(r));

describe('lanes: one statement out per key', () => {
  it('the first call goes out at once; calls that arrive while it is out go together in the next, in order', async () => {
    const { batches, run } = controlled();
    const call = createLanes(10, run);
    const first = call('k', 1);
    expect(batches.map((b) => b.items)).toEqual([[1]]);
    const later = [call('k', 2), call('k', 3), call('k', 4)];
    expect(batches).toHaveLength(1);
    batches[0]!.answer(['one']);
    expect(await first).toBe('one');
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3, 4]]);
    batches[1]!.answer(['two', 'three', 'four']);
    expect(await Promise.all(later)).toEqual(['two', 'three', 'four']);
  });

  it('keys do not wait for each other', () => {
    const { batches, run } = controlled();
    const call = createLanes(10, run);
    void call('a', 1);
    void call('b', 2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
  });

  it('a batch holds at most `max` calls; the rest go in the batches after it', async () => {
    const { batches, run } = controlled();
    const call = createLanes(2, run);
    const all = [1, 2, 3, 4, 5, 6].map((i) => call('k', i));
    for (let i = 0; batches.length > i; i++) {
      batches[i]!.answer(batches[i]!.items.map(String));
      await turn();
    }
    expect(batches.map((b) => b.items)).toEqual([[1], [2, 3], [4, 5], [6]]);
    expect(await Promise.all(all)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('a failed batch rejects its own calls, and those waiting behind it still go out', async () => {
    const { batches, run } = controlled();
    const call = createLanes(10, run);
    const first = settled(call('k', 1));
    const second = settled(call('k', 2));
    batches[0]!.fail(new Error('connection lost'));
    expect(await first).toEqual({ error: new Error('connection lost') });
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
    batches[1]!.answer(['two']);
    expect(await second).toEqual({ value: 'two' });
  });

  it('a run that throws at once, or answers too few results, rejects the batch and leaves the lane usable', async () => {
    let mode: 'throw' | 'short' | 'ok' = 'throw';
    const call = createLanes(10, (items: readonly number[]): Promise<readonly number[]> => {
      if (mode === 'throw') throw new Error('bad input');
      return Promise.resolve(mode === 'short' ? [] : items.map((i) => i * 10));
    });
    expect(await settled(call('k', 1))).toEqual({ error: new Error('bad input') });
    mode = 'short';
    expect(await settled(call('k', 2))).toMatchObject({ error: { message: 'a batch of 1 calls was answered with 0 results' } });
    mode = 'ok';
    expect(await call('k', 3)).toBe(30);
  });

  it('a lane is gone once its last statement is answered: the next call goes out at once', async () => {
    const { batches, run } = controlled();
    const call = createLanes(10, run);
    const first = call('k', 1);
    batches[0]!.answer(['one']);
    await first;
    void call('k', 2);
    expect(batches.map((b) => b.items)).toEqual([[1], [2]]);
  });

  it('refuses a batch size that is not a positive integer', () => {
    expect(() => createLanes(0, async () => [])).toThrow(RangeError);
    expect(() => createLanes(1.5, async () => [])).toThrow(RangeError);
  });
});
