import * as E from 'fp-ts/lib/Either.js';
import type { DependencyContainer } from 'tsyringe';
import type { Clock, GrantedScope, IssuedKey, Mode, Org, Stores } from '@esig/core';
import { bootstrapKey, execute } from '@esig/core';
import { systemClock } from '@esig/runtime-node';
import type { ServerConfig } from './config.js';
import { buildContainer } from './container.js';
import { openDatabase } from './database.js';
import { T } from './tokens.js';

/* Operator tasks of the `esig` CLI, each opening the database for itself and closing it when done. */

/** Creates an org (if needed) and a key in it, as the `esig keys create` command does. */
export const createKey = async (
  c: DependencyContainer,
  input: { orgName: string; mode: Mode; scopes: readonly GrantedScope[]; name: string },
): Promise<IssuedKey & { readonly org: Org }> => {
  const deps = { uow: c.resolve(T.UnitOfWork), clock: c.resolve(T.Clock), ids: c.resolve(T.Ids), crypto: c.resolve(T.Crypto) };
  const r = await execute(deps)(bootstrapKey(deps)(input))();
  if (E.isLeft(r)) throw new Error(`Could not create the key: ${r.left._tag}`, { cause: r.left });
  return r.right;
};

/** `esig keys create`: opens the database, creates the key, closes. */
export const createKeyStandalone = async (config: ServerConfig, input: Parameters<typeof createKey>[1]) => {
  const db = await openDatabase(config);
  const c = buildContainer(config, db);
  try {
    return await createKey(c, input);
  } finally {
    await c.resolve(T.PdfPool).close();
    await db.close();
  }
};

/** `esig jobs …`: opens the database, hands its job queue to an operator's command, closes. */
export const withJobStores = async <A>(config: ServerConfig, f: (deps: { readonly stores: Stores; readonly clock: Clock }) => Promise<A>): Promise<A> => {
  const db = await openDatabase(config);
  try {
    return await f({ stores: db.stores, clock: systemClock });
  } finally {
    await db.close();
  }
};

/** Applies pending migrations and reports how many ran. */
export const migrate = async (config: ServerConfig): Promise<number> => {
  const db = await openDatabase(config, false);
  try {
    return await db.migrate();
  } finally {
    await db.close();
  }
};

