import { expect, vi } from 'vitest';

/**
 * Shows that `send` gives up after exactly `timeoutMs` without reading a clock: it runs with `setTimeout` and
 * `clearTimeout` on vitest's fake clock, while sockets and DNS stay real. Once `ready` holds, `timeoutMs` − 1 ms
 * passes and the send must still be waiting; 1 ms more and it must have answered. Its answer is returned for the
 * caller to check. A slow machine only makes `ready` come later, so nothing here depends on an idle machine; a
 * timer half or twice as long fails.
 *
 * `ready` says the work is where the test stalls it (a request sent, headers received); by default it is "the code
 * under test has armed a timer of exactly `timeoutMs`", for code whose stall the test cannot see from outside.
 */
export const onItsTimer = async <A>(send: () => Promise<A>, timeoutMs: number, ready?: () => boolean): Promise<A> => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  const fake = globalThis.setTimeout;
  let armed = false;
  if (ready === undefined)
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => {
      if (args[1] === timeoutMs) armed = true;
      return fake(...args);
    }) as typeof setTimeout;
  const isReady = ready ?? (() => armed);
  try {
    let answer: A | undefined;
    const sent = send().then((r) => (answer = r));
    // Polled on turns of the event loop, which the fake clock leaves alone (vi.waitFor would move it); the deadline
    // only bounds how long broken code (one that never gets there) is waited for.
    for (const end = Date.now() + 20_000; !isReady(); ) {
      if (Date.now() > end) throw new Error(ready === undefined ? `no timer of ${timeoutMs} ms was armed` : 'the work never got where the test stalls it');
      await new Promise((r) => setImmediate(r));
    }
    await vi.advanceTimersByTimeAsync(timeoutMs - 1);
    expect(answer).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    return await sent;
  } finally {
    globalThis.setTimeout = fake;
    vi.useRealTimers();
  }
};
