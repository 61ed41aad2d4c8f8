import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import * as FP from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import { describe, expect, it } from 'vitest';
import * as TE from '../src/task-either.js';

// What a step does with its input: answer Right or Left (from the input), or throw, synchronously while the task
// is built or inside the task, or reject.
type Behaviour = 'right' | 'left' | 'throw-building' | 'throw-running' | 'reject';
const behaviour = fc.constantFrom<Behaviour>('right', 'right', 'right', 'left', 'throw-building', 'throw-running', 'reject');
const either = fc.oneof(fc.integer().map((n) => E.right(n)), fc.string().map((s) => E.left(s)));

/** A TaskEither-returning step that does `b` with its input. */
const stepOf =
  (b: Behaviour, salt: number) =>
  (n: number): FP.TaskEither<string, number> => {
    if (b === 'throw-building') throw new Error(`built ${n + salt}`);
    return () => {
      if (b === 'throw-running') throw new Error(`ran ${n + salt}`);
      if (b === 'reject') return Promise.reject(new Error(`rejected ${n + salt}`));
      return Promise.resolve(b === 'left' ? E.left(`left ${n + salt}`) : E.right(n * 3 + salt));
    };
  };
/** An Either-returning step (for chainEitherK), or one that throws. */
const eitherStepOf = (b: Behaviour, salt: number) => (n: number): E.Either<string, number> => {
  if (b === 'throw-building' || b === 'throw-running' || b === 'reject') throw new Error(`threw ${n + salt}`);
  return b === 'left' ? E.left(`left ${n + salt}`) : E.right(n - salt);
};

/** The combinators under test, typed as fp-ts's: esig's module must fit fp-ts's signatures to be passed as one. */
type Combinators = Pick<typeof FP, 'map' | 'mapLeft' | 'chain' | 'chainW' | 'chainFirst' | 'chainFirstW' | 'chainEitherK' | 'chainEitherKW' | 'bind' | 'bindW'>;

/** What running a task gives: its Either, the message it rejected with, or the one it threw (not a promise). */
const outcome = async <A>(task: FP.TaskEither<string, A>): Promise<unknown> => {
  let running: Promise<E.Either<string, A>>;
  try {
    running = task();
  } catch (e) {
    return { threwWhenRun: (e as Error).message };
  }
  try {
    return { resolved: await running };
  } catch (e) {
    return { rejected: (e as Error).message };
  }
};
/** The source task: a Right or Left, or one whose run throws. */
const source = (start: E.Either<string, number>, throws: boolean): FP.TaskEither<string, number> =>
  throws
    ? () => {
        throw new Error('source threw');
      }
    : () => Promise.resolve(start);

describe('task-either: the same values as fp-ts', () => {
  it('map, mapLeft, chain, chainW, chainFirst, chainFirstW, chainEitherK, chainEitherKW, bind and bindW, in any sequence', async () => {
    const op = fc.record({
      name: fc.constantFrom('map', 'mapLeft', 'chain', 'chainW', 'chainFirst', 'chainFirstW', 'chainEitherK', 'chainEitherKW', 'bind', 'bindW'),
      b: behaviour,
      salt: fc.integer({ min: -5, max: 5 }),
    });
    await fc.assert(
      fc.asyncProperty(either, fc.boolean(), fc.array(op, { maxLength: 8 }), async (start, throws, ops) => {
        // Build the same pipeline from each module. `bind` works on records: it wraps the number, names the
        // result, and `map` takes it back out so the next step gets a number again.
        const build = (M: Combinators): FP.TaskEither<string, unknown> => {
          let acc = source(start, throws);
          for (const { name, b, salt } of ops) {
            const step = stepOf(b, salt);
            const either = eitherStepOf(b, salt);
            const bound = ({ n }: { readonly n: number }) => step(n);
            switch (name) {
              case 'map':
                acc = pipe(acc, M.map((n) => n + salt));
                break;
              case 'mapLeft':
                acc = pipe(acc, M.mapLeft((s) => `${s}/${salt}`));
                break;
              case 'chain':
                acc = pipe(acc, M.chain(step));
                break;
              case 'chainW':
                acc = pipe(acc, M.chainW(step));
                break;
              case 'chainFirst':
                acc = pipe(acc, M.chainFirst(step));
                break;
              case 'chainFirstW':
                acc = pipe(acc, M.chainFirstW(step));
                break;
              case 'chainEitherK':
                acc = pipe(acc, M.chainEitherK(either));
                break;
              case 'chainEitherKW':
                acc = pipe(acc, M.chainEitherKW(either));
                break;
              case 'bind':
                acc = pipe(acc, M.map((n) => ({ n })), M.bind('m', bound), M.map(({ n, m }) => n + m));
                break;
              case 'bindW':
                acc = pipe(acc, M.map((n) => ({ n })), M.bindW('m', bound), M.map(({ n, m }) => n + m));
                break;
            }
          }
          return acc;
        };
        expect(await outcome(build(TE))).toEqual(await outcome(build(FP)));
      }),
      { numRuns: 500 },
    );
  });

  it('does nothing until the task is run, and runs each step once per run', async () => {
    let ran = 0;
    const counted: FP.TaskEither<string, number> = () => {
      ran += 1;
      return Promise.resolve(E.right(ran));
    };
    const task = pipe(
      counted,
      TE.chain((n) => TE.right(n + 1)),
      TE.chainFirst(() => counted),
      TE.bind('x', () => TE.right(1)),
      TE.map((r) => r),
    );
    expect(ran).toBe(0);
    await task();
    expect(ran).toBe(2);
    await task();
    expect(ran).toBe(4);
  });

  it('stops at the first Left: no later step runs', async () => {
    const seen: string[] = [];
    const r = await pipe(
      TE.left<string, number>('first'),
      TE.chain((n) => {
        seen.push('chain');
        return TE.right(n);
      }),
      TE.chainFirst(() => {
        seen.push('chainFirst');
        return TE.right(0);
      }),
      TE.chainEitherK((n) => {
        seen.push('chainEitherK');
        return E.right(n);
      }),
      TE.map((n) => {
        seen.push('map');
        return n;
      }),
    )();
    expect(r).toEqual(E.left('first'));
    expect(seen).toEqual([]);
  });

  it('runs a chain built in a loop, thousands of steps long, as fp-ts does (no stack overflow)', async () => {
    const fold = (M: Combinators & Pick<typeof FP, 'right'>, n: number) =>
      Array.from({ length: n }, (_, i) => i).reduce<FP.TaskEither<string, number>>(
        (acc, i) => pipe(acc, i % 2 === 0 ? M.chain((s) => M.right(s + i)) : M.map((s) => s + i)),
        M.right(0),
      );
    for (const n of [1_000, 20_000]) {
      expect(await outcome(fold(FP, n))).toEqual({ resolved: E.right((n * (n - 1)) / 2) });
      expect(await outcome(fold(TE, n))).toEqual({ resolved: E.right((n * (n - 1)) / 2) });
    }
  });

  it('bind copies the record as fp-ts does, an own `__proto__` key included', async () => {
    const record = JSON.parse('{"a": 1, "__proto__": {"inherited": true}}') as { readonly a: number };
    const shape = (r: E.Either<string, object>) => (E.isRight(r) ? { own: Object.keys(r.right), inherited: (r.right as { inherited?: unknown }).inherited } : r);
    const build = (M: Combinators & Pick<typeof FP, 'right'>) => pipe(M.right<string, { readonly a: number }>(record), M.bind('b', () => M.right(2)));
    expect(shape(await build(TE)())).toEqual(shape(await build(FP)()));
  });
});
