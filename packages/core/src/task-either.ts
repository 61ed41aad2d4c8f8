/**
 * fp-ts's `TaskEither` module, with its most used sequencing combinators (`map`, `mapLeft`, `chain`, `chainW`,
 * `chainFirst`, `chainFirstW`, `chainEitherK`, `chainEitherKW`, `bind`, `bindW`) written out directly. Import
 * it as `TE` in place of `fp-ts/lib/TaskEither.js`: everything else is fp-ts's own, and the values are fp-ts
 * `TaskEither`s, so the two mix freely.
 *
 * Why: in fp-ts 2.16 each of these goes through `dual` (which copies its arguments into an array, then again
 * into another for the curried form) and through `Task`'s own `flatMap`, which starts every step with
 * `Promise.resolve().then(...)`: an extra promise and microtask per step. A request runs a few dozen steps
 * (counted on the create-request path: about 26), and `npm run bench:task-either` measures a six-step chain at
 * several times the cost of the same chain written directly.
 *
 * Each combinator here gives what fp-ts's gives, value for value (a property test holds them to it,
 * `task-either.test.ts`): the same Right or Left, the first Left of a sequence, and a rejection where a
 * function throws. One difference of timing only: the task a combinator is applied to starts when the
 * combined task is run, in the same turn, where fp-ts starts it a microtask later (past 256 tasks started
 * inside one another, it too waits a microtask, so that a long chain cannot overflow the stack). Nothing here
 * depends on that delay; what a task does is still done only when it is run, never when it is built.
 *
 * Two things fp-ts tolerates at run time and these do not, both refused by the types already: the data-first
 * form (`chain(ma, f)`; write `pipe(ma, chain(f))`), and a task that returns something other than a promise.
 */
import type { Either } from 'fp-ts/lib/Either.js';
import { tryCatch } from 'fp-ts/lib/Either.js';
import type { TaskEither } from 'fp-ts/lib/TaskEither.js';

export * from 'fp-ts/lib/TaskEither.js';

/**
 * How many tasks may start inside one another in one synchronous call. A pipeline of n steps starts its n tasks
 * nested that way, and a chain built in a loop can be thousands of steps long: past this depth a task starts a
 * microtask later, on a fresh stack, as every fp-ts task does. (Without the bound, such a chain of about 3,000
 * steps overflowed the stack where fp-ts's ran.)
 */
const MAX_NESTED_STARTS = 256;
let nestedStarts = 0;

/** Runs `task`, a synchronous throw turned into a rejection (as fp-ts, which runs it in a `then`, does). */
const start = <A>(task: () => Promise<A>): Promise<A> => {
  if (nestedStarts >= MAX_NESTED_STARTS) return Promise.resolve().then(task);
  nestedStarts++;
  const started = tryCatch(task, (e) => e);
  nestedStarts--;
  return started._tag === 'Right' ? started.right : Promise.reject(started.left);
};

export const map =
  <A, B>(f: (a: A) => B) =>
  <E>(fa: TaskEither<E, A>): TaskEither<E, B> =>
  () =>
    start(fa).then((e) => (e._tag === 'Left' ? e : { _tag: 'Right', right: f(e.right) }));

export const mapLeft =
  <E, G>(f: (e: E) => G) =>
  <A>(fa: TaskEither<E, A>): TaskEither<G, A> =>
  () =>
    start(fa).then((e) => (e._tag === 'Left' ? { _tag: 'Left', left: f(e.left) } : e));

export const chainW =
  <E2, A, B>(f: (a: A) => TaskEither<E2, B>) =>
  <E1>(ma: TaskEither<E1, A>): TaskEither<E1 | E2, B> =>
  () =>
    start(ma).then((e): Promise<Either<E1 | E2, B>> | Either<E1, never> => (e._tag === 'Left' ? e : f(e.right)()));

export const chain: <E, A, B>(f: (a: A) => TaskEither<E, B>) => (ma: TaskEither<E, A>) => TaskEither<E, B> = chainW;

export const chainFirstW =
  <E2, A, B>(f: (a: A) => TaskEither<E2, B>) =>
  <E1>(ma: TaskEither<E1, A>): TaskEither<E1 | E2, A> =>
  () =>
    start(ma).then((e): Promise<Either<E1 | E2, A>> | Either<E1, never> =>
      e._tag === 'Left' ? e : f(e.right)().then((r) => (r._tag === 'Left' ? r : e)),
    );

export const chainFirst: <E, A, B>(f: (a: A) => TaskEither<E, B>) => (ma: TaskEither<E, A>) => TaskEither<E, A> = chainFirstW;

export const chainEitherKW =
  <E2, A, B>(f: (a: A) => Either<E2, B>) =>
  <E1>(ma: TaskEither<E1, A>): TaskEither<E1 | E2, B> =>
  () =>
    start(ma).then((e): Either<E1 | E2, B> => (e._tag === 'Left' ? e : f(e.right)));

export const chainEitherK: <E, A, B>(f: (a: A) => Either<E, B>) => (ma: TaskEither<E, A>) => TaskEither<E, B> = chainEitherKW;

/** A record with `name` added, typed as fp-ts types it. */
type Bound<A, N extends string, B> = { readonly [K in keyof A | N]: K extends keyof A ? A[K] : B };

export const bindW =
  <N extends string, A, E2, B>(name: Exclude<N, keyof A>, f: (a: A) => TaskEither<E2, B>) =>
  <E1>(ma: TaskEither<E1, A>): TaskEither<E1 | E2, Bound<A, N, B>> =>
  () =>
    start(ma).then((e): Promise<Either<E1 | E2, Bound<A, N, B>>> | Either<E1, never> =>
      e._tag === 'Left'
        ? e
        : f(e.right)().then((r) =>
            // Object.assign, as fp-ts: a name such as `__proto__` then acts as it does there.
            r._tag === 'Left' ? r : { _tag: 'Right', right: Object.assign({}, e.right, { [name]: r.right }) as Bound<A, N, B> },
          ),
    );

export const bind: <N extends string, A, E, B>(
  name: Exclude<N, keyof A>,
  f: (a: A) => TaskEither<E, B>,
) => (ma: TaskEither<E, A>) => TaskEither<E, Bound<A, N, B>> = bindW;
