/** Host names whose resolution is remembered at most; past it the oldest is forgotten. */
const MAX_RESOLUTIONS = 1_024;

/**
 * `resolve`, with each name's answer reused for `maxAgeMs` and one resolution at a time per name. The
 * system resolver (`getaddrinfo` on libuv's threads) gives no TTL, so the age is ours: short enough that a
 * receiver's move is followed within a second, long enough that a busy endpoint costs one resolution a
 * second rather than one per delivery (about 50 µs of a thread's CPU each, on the same cores as the worker).
 * Reuse weakens no check: the caller still checks every address of the answer for every request, and
 * connections are pinned to the checked set. An answer reused is one that was checked a moment ago.
 */
export const reusedResolutions = (
  resolve: (host: string) => Promise<readonly string[]>,
  maxAgeMs: number,
  now: () => number,
): ((host: string) => Promise<readonly string[]>) => {
  if (!(maxAgeMs > 0)) return resolve;
  // Both dated when the lookup was asked, so a slow answer is reused for what is left of the window only.
  const answers = new Map<string, { readonly at: number; readonly addresses: readonly string[] }>();
  const pending = new Map<string, { readonly at: number; readonly answer: Promise<readonly string[]> }>();
  // A clock that steps back makes an age negative: what it dates is treated as expired.
  const fresh = (at: number) => {
    const age = now() - at;
    return age >= 0 && age < maxAgeMs;
  };
  return (host) => {
    const known = answers.get(host);
    if (known !== undefined) {
      if (fresh(known.at)) return Promise.resolve(known.addresses);
      answers.delete(host);
    }
    // A resolution that hangs is shared only while it is young: later requests ask again rather than
    // all waiting on it (each request's own deadline still bounds its wait).
    const inFlight = pending.get(host);
    if (inFlight !== undefined && fresh(inFlight.at)) return inFlight.answer;
    const at = now();
    // Through `then`, so that a resolver that throws rather than rejects is a rejection here too.
    const answer: Promise<readonly string[]> = Promise.resolve(host)
      .then(resolve)
      .then((addresses) => {
        // Kept only if it is still the name's current lookup (a later one replaced a lookup that hung: its
        // answer, when it comes, is older than the later one's), and only if it has addresses (none is a
        // failure to the check, and a failure is never reused).
        if (pending.get(host)?.answer === answer && addresses.length > 0) {
          if (!answers.has(host) && answers.size >= MAX_RESOLUTIONS) answers.delete(answers.keys().next().value as string);
          answers.set(host, { at, addresses: [...addresses] });
        }
        return addresses;
      });
    const settled = () => {
      if (pending.get(host)?.answer === answer) pending.delete(host);
    };
    answer.then(settled, settled);
    pending.set(host, { at, answer });
    return answer;
  };
};
