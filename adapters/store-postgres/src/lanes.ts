/**
 * Calls that share a key go out one statement at a time: while a statement of a key is out, the calls
 * of that key that arrive wait, then go together (at most `max` of them) in the next one. A call never
 * joins a statement already sent, so whatever the statement reads, it reads after every call in it arrived.
 * An idle key's call goes out at once. (turn-batch.ts is the other batcher here: it closes a batch at the
 * end of an event-loop turn, for reads. A lane does not wait for a turn: it sends the next batch, and
 * forgets an idle key, in the same callback that answers the previous one, so a call made in answer to
 * its own result finds the key idle and goes out at once.)
 *
 * `run` decides a batch and answers one result per item, in their order. When it rejects, every call of
 * that batch rejects with its reason, and the calls that waited behind it still go out.
 */
export const createLanes = <T, R>(max: number, run: (items: readonly T[]) => Promise<readonly R[]>): ((key: string, item: T) => Promise<R>) => {
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer, got ${max}`);
  interface Waiter {
    readonly item: T;
    readonly resolve: (r: R) => void;
    readonly reject: (e: unknown) => void;
  }
  // A key is here while a statement of its is out; its list holds the calls waiting for the next one.
  const lanes = new Map<string, Waiter[]>();

  const send = (key: string, waiting: Waiter[]): void => {
    const batch = waiting.splice(0, max);
    const settle = (each: (w: Waiter, i: number) => void): void => {
      batch.forEach(each);
      if (waiting.length > 0) send(key, waiting);
      else lanes.delete(key);
    };
    let decided: Promise<readonly R[]>;
    try {
      decided = run(batch.map((w) => w.item));
    } catch (e) {
      // A synchronous throw rejects the batch rather than escaping into a caller that merely arrived first.
      decided = Promise.reject(e);
    }
    decided.then(
      (results) =>
        settle((w, i) =>
          i < results.length ? w.resolve(results[i]!) : w.reject(new Error(`a batch of ${batch.length} calls was answered with ${results.length} results`)),
        ),
      (e: unknown) => settle((w) => w.reject(e)),
    );
  };

  return (key, item) =>
    new Promise<R>((resolve, reject) => {
      const waiting = lanes.get(key);
      if (waiting !== undefined) {
        waiting.push({ item, resolve, reject });
        return;
      }
      const fresh: Waiter[] = [{ item, resolve, reject }];
      lanes.set(key, fresh);
      send(key, fresh);
    });
};
