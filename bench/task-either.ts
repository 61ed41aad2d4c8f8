/**
 * `npm run bench:task-either [-- --iterations 200000 --rounds 5]`
 *
 * What a step of a TaskEither pipeline costs with `@esig/core/task-either` (the combinators esig's code uses,
 * written out) beside the same pipeline built from fp-ts's own `TaskEither` module (the baseline), alternated
 * round by round in one process. The pipeline is a request's typical shape: a Right, then chain, chainW,
 * chainFirst, chainEitherK, bind and map, built and run anew each time, as a use case builds its own per call.
 */
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import * as E from 'fp-ts/lib/Either.js';
import * as FP from 'fp-ts/lib/TaskEither.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';

const { values } = parseArgs({
  options: {
    iterations: { type: 'string', default: '200000' },
    rounds: { type: 'string', default: '5' },
  },
});
const iterations = Number(values.iterations);
const rounds = Number(values.rounds);
const STEPS = 6;

const pipeline = (M: typeof FP | typeof TE, i: number): FP.TaskEither<string, number> =>
  pipe(
    M.right<string, number>(i),
    M.chain((n) => M.right(n + 1)),
    M.chainW((n) => (n < 0 ? M.left('negative') : M.right(n * 2))),
    M.chainFirst((n) => M.right(n)),
    M.chainEitherK((n) => E.right(n - 1)),
    M.bind('n', (n) => M.right(n)),
    M.map(({ n }) => n),
  );

const time = async (M: typeof FP | typeof TE): Promise<number> => {
  let sum = 0;
  const t0 = performance.now();
  for (let i = 0; i < iterations; i++) {
    const r = await pipeline(M, i)();
    if (r._tag === 'Right') sum += r.right;
  }
  const us = ((performance.now() - t0) * 1000) / iterations;
  if (sum === 0 && iterations > 1) throw new Error('the pipeline computed nothing');
  return us;
};

// Warm both up before timing either.
await time(FP);
await time(TE);
const fp: number[] = [];
const esig: number[] = [];
for (let r = 0; r < rounds; r++) {
  fp.push(await time(FP));
  esig.push(await time(TE));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const row = (name: string, xs: number[]) =>
  `${name.padEnd(44)} ${median(xs).toFixed(2).padStart(8)} µs  ${(median(xs) / STEPS).toFixed(2).padStart(6)} µs/step   rounds: ${xs.map((x) => x.toFixed(2)).join(', ')}\n`;
process.stdout.write(`\nbench:task-either — a ${STEPS}-step pipeline built and run ${iterations} times per round, ${rounds} rounds alternated\n\n`);
process.stdout.write(row('fp-ts TaskEither (baseline)', fp));
process.stdout.write(row('@esig/core/task-either', esig));
process.stdout.write(`\n@esig/core/task-either takes ${((median(esig) / median(fp)) * 100).toFixed(1)} % of fp-ts's time per pipeline\n`);
