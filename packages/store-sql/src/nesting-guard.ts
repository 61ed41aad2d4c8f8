import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Tells whether code runs inside a transaction's work, so that a store adapter can refuse a transaction
 * started there, or a write through its top-level stores, with an error at once. Without the check, on
 * SQLite that call waits behind the very transaction that waits for it (every later write in the process
 * waits too), and on PostgreSQL it runs outside the transaction, or waits on a row lock the transaction holds.
 */
export interface NestingGuard {
  /** Runs `work` marked as the work of the transaction `scope` (whose `active` turns false when it ends). */
  run<T>(scope: { readonly active: boolean }, work: () => T): T;
  /** True in the async context of a transaction's work whose transaction has not ended. */
  inside(): boolean;
}

/**
 * A guard that tracks the work's async context with an AsyncLocalStorage, or (`enabled` false) one that
 * tracks nothing and never reports being inside.
 *
 * Why it can be turned off: on Node 20 the first `AsyncLocalStorage.run` installs promise hooks for the
 * whole process, so that every promise created from then on, in every request, pays to carry the store.
 * Measured on the API's create-request (SQLite), that cost about a tenth of the server's CPU per request
 * (docs/performance.md, "Fifth round"). The check finds a programming error, so tests and development
 * turn it on; a deployment whose code passed them can leave it off.
 */
export const createNestingGuard = (enabled: boolean): NestingGuard => {
  if (!enabled) return { run: (_scope, work) => work(), inside: () => false };
  const current = new AsyncLocalStorage<{ readonly active: boolean }>();
  return {
    run: (scope, work) => current.run(scope, work),
    inside: () => current.getStore()?.active === true,
  };
};
