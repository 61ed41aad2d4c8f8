/**
 * Calls made in one turn of the event loop, answered together. The first call of a turn opens a batch; the
 * batch is answered once the turn's callbacks and their promises have run (`setImmediate`), so every call
 * they made is in it. Worth it where many callers ask for rows of one kind at the same moment: the job loops
 * that one claim sets going each read their webhook delivery, and one statement answers them all instead of
 * one each. `answer` gets the wants in call order and answers each, in the same order; should it fail (or
 * answer fewer), every call of the batch fails with that. (lanes.ts batches differently: per key, one
 * statement out at a time, for the rate limiter's writes.)
 */
export const turnBatcher = <W, R>(answer: (wants: readonly W[]) => Promise<readonly R[]>): ((want: W) => Promise<R>) => {
  interface Call {
    readonly want: W;
    readonly resolve: (r: R) => void;
    readonly reject: (e: unknown) => void;
  }
  let open: Call[] | null = null;
  const settle = (batch: readonly Call[]) =>
    Promise.resolve()
      .then(() => answer(batch.map((c) => c.want)))
      .then((answers) => {
        if (answers.length !== batch.length) throw new Error(`a batch of ${batch.length} got ${answers.length} answers`);
        batch.forEach((c, i) => c.resolve(answers[i]!));
      })
      .catch((e: unknown) => batch.forEach((c) => c.reject(e)));
  return (want) =>
    new Promise<R>((resolve, reject) => {
      if (open === null) {
        const batch: Call[] = (open = []);
        setImmediate(() => {
          open = null;
          void settle(batch);
        });
      }
      open.push({ want, resolve, reject });
    });
};
