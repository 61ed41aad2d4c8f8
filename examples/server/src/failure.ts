/**
 * What `esig` prints when a command fails on something outside it: the port taken, the database down or
 * refusing the login, a file it may not read. Such an error carries a code (a system error's `EADDRINUSE`,
 * PostgreSQL's SQLSTATE) and its message says what is wrong; a stack would only bury that line. Anything
 * else is a fault of esig's own, and its stack is what a bug report needs.
 */
export const describeFailure = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e);
  const code = (e as { code?: unknown }).code;
  if (typeof code !== 'string') return e.stack ?? e.message;
  const hint = HINTS[code];
  return hint === undefined ? e.message : `${e.message} (${hint})`;
};

const HINTS: Readonly<Record<string, string>> = {
  EADDRINUSE: 'another process listens there: stop it, or choose another port with ESIG_PORT',
  ESIG_SCHEMA_TOO_OLD: 'run `esig migrate` first, or start with ESIG_AUTO_MIGRATE=true, the default',
};
