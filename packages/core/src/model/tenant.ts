/** Test and live data never meet: every stored row carries its mode, and every query filters by it. */
export type Mode = 'test' | 'live';

export const MODES: readonly Mode[] = ['test', 'live'];

/**
 * The partition every resource lives in. Store ports take a Tenant on every call so that org and mode
 * isolation is enforced in the queries themselves, not only in the routes above them.
 */
export interface Tenant {
  readonly orgId: string;
  readonly mode: Mode;
}
