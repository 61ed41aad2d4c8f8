import type { KeysetPosition, NewJobKinds, Stores, Tenant, UnitOfWork } from '@esig/core';
import { TENANT_A_LIVE, TENANT_B, ok } from '../builders.js';

/** One adapter instance with its own empty data, made fresh for every test. */
export interface StoreHarness {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  /**
   * The adapter's wake-up for in-process workers, where it has one: calls the listener after each commit
   * that enqueued or revived a job, with the kinds it made claimable. The jobs contract checks when it fires,
   * with what, and when it must not.
   */
  readonly onNewJobs?: (listener: (kinds: NewJobKinds) => void) => () => void;
  /** Releases whatever the harness holds (connections, files). */
  cleanup(): Promise<void>;
}

/** The current test's harness; each group of the contract takes this and calls it inside its tests. */
export type Harness = () => StoreHarness;

/** The two tenants a row of TENANT_A must be invisible to: another org, and the same org's other mode. */
export const STRANGERS: readonly Tenant[] = [TENANT_B, TENANT_A_LIVE];

export const deferred = () => {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
};

/** A Task that yields to the event loop for `ms`, so concurrent transactions get to interleave. */
export const pause = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));

export const position = (a: { readonly createdAt: string; readonly id: string }): KeysetPosition => ({ createdAt: a.createdAt, id: a.id });

export const byKeyset = (a: { createdAt: string; id: string }, b: { createdAt: string; id: string }) =>
  a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

export const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => a.byteLength === b.byteLength && a.every((x, i) => x === b[i]);

/** The first 100 events of a tenant, oldest first. */
export const firstPage = (s: Stores, t: Tenant) => ok(s.events.list(t, { limit: 100, order: 'asc', after: null, filter: {} }));
