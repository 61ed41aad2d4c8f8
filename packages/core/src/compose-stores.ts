import type { Stores } from './ports/stores.js';
import type { UnitOfWork } from './ports/unit-of-work.js';

/** Replacements for some store ports, each made from the stores it joins (a transaction's, or the plain ones). */
export type PortOverrides = { readonly [K in keyof Stores]?: (base: Stores) => Stores[K] };

/**
 * One set of stores from an adapter that provides them all and your own adapters for a few ports (contents
 * in an object store, say). Each override is built from the stores it sits beside: inside `uow.transaction`
 * from the transaction's stores, outside from the plain ones, so an override kept in the same database can
 * reach the same transaction through them.
 *
 * An override in another system (S3, Redis) is not part of the database's transaction: what it writes stays
 * when the transaction rolls back, and is visible before it commits. Ports whose writes are keyed puts (the
 * `DocumentContentStore`) tolerate that: a rollback leaves an unreferenced blob, never a row without bytes,
 * and a repeated put of the same key replaces it. Do not move a port whose writes must commit with others
 * (the job queue, the outbox, idempotency records) out of the database.
 *
 * @example
 * const { stores, uow } = overridePorts(openSqliteStore({ path }), { documentContents: () => myS3Contents });
 */
export const overridePorts = (base: { readonly stores: Stores; readonly uow: UnitOfWork }, overrides: PortOverrides): { readonly stores: Stores; readonly uow: UnitOfWork } => {
  const apply = (s: Stores): Stores => {
    const out: Record<string, unknown> = { ...s };
    for (const [port, make] of Object.entries(overrides) as Array<[keyof Stores, (b: Stores) => unknown]>) out[port] = make(s);
    return out as unknown as Stores;
  };
  return {
    stores: apply(base.stores),
    uow: { transaction: (work) => base.uow.transaction((tx) => work(apply(tx))) },
  };
};
