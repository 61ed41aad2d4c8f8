/**
 * SQL texts that differ only in the length of a list (`IN (?, ?, …)`, one arm per job kind).
 *
 * Built once per length and then handed out as the same string: building one allocates on every call, and
 * the connection's statement cache finds a statement by its text, which V8 hashes once per string object
 * (a freshly built text is hashed again on every lookup).
 */

/** Lengths up to this are kept; longer lists (only a caller outside the API sends them) are built each time. */
export const KEPT_LENGTHS = 64;

export const bySize = (build: (n: number) => string): ((n: number) => string) => {
  const built: Array<string | undefined> = [];
  return (n) => {
    if (!Number.isInteger(n) || n < 0 || n > KEPT_LENGTHS) return build(n);
    return (built[n] ??= build(n));
  };
};

/** `?, ?, ?` for an IN list of `n` values. */
export const placeholders = bySize((n: number): string => Array.from({ length: n }, () => '?').join(', '));
