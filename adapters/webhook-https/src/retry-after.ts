const DELTA_SECONDS = /^\d+$/;
// The three HTTP-date forms of RFC 9110 §5.6.7: IMF-fixdate, obsolete RFC 850, and asctime.
const IMF_FIXDATE = /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC_850 = /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME = /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * `Retry-After` in whole seconds from `nowMs`: delta-seconds as given, an HTTP-date as the time left until
 * it (0 when past, rounded up). Anything else — including the many strings `Date.parse` would accept —
 * is `null`.
 */
export const parseRetryAfter = (value: string | undefined, nowMs: number): number | null => {
  if (value === undefined) return null;
  const v = value.trim();
  if (DELTA_SECONDS.test(v)) {
    const s = Number(v);
    return Number.isSafeInteger(s) ? s : null;
  }
  let ms = Number.NaN;
  if (IMF_FIXDATE.test(v) || RFC_850.test(v)) ms = Date.parse(v);
  else if (ASCTIME.test(v)) ms = Date.parse(`${v} GMT`); // asctime carries no zone; HTTP dates are UTC
  if (Number.isNaN(ms)) return null;
  return Math.max(0, Math.ceil((ms - nowMs) / 1000));
};
