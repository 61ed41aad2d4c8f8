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

/**
 * `LIMIT` with its value bound as a parameter (`limitParam('?')`, `limitParam('@limit')`), written so that SQLite
 * does not prepare the statement again at every run.
 *
 * SQLite (3.53, as better-sqlite3 12 ships it) reads the value bound to a bare `LIMIT ?` while it prepares, to
 * plan with it (`sqlite3ExprIsInteger` with a parse context), and marks the statement to be prepared again
 * whenever that parameter is bound anew. better-sqlite3 binds at every run, so every run of such a statement
 * paid a whole prepare: for the job claim, about 560 k machine instructions each time, 6 % of all the work of a
 * webhook delivery. A unary plus hides the parameter from that reading (SQLite looks through it at literals only) and
 * changes nothing else: the value must still be an integer, and the plans and the program are the same
 * (better-sqlite3 binds numbers as doubles, which SQLite never planned with anyway). `sql-text.test.ts` scans
 * this package's sources for a bare one.
 *
 * (Statistics from `ANALYZE`, which esig never runs on SQLite, bring the same re-prepare back through
 * `sqlite_stat4`; `openSqliteStore` warns when the file has them.)
 */
export const limitParam = (parameter: string): string => `LIMIT +${parameter}`;
