import * as E from 'fp-ts/lib/Either.js';
import type { DependencyContainer } from 'tsyringe';
import type { Clock, GrantedScope, IssuedKey, Mode, OAuthGrant, Org, Stores } from '@esig/core';
import { bootstrapKey, execute, listOAuthGrants, revokeOAuthGrant } from '@esig/core';
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

/** `esig oauth grants list --org`: the grants of both modes of an org, or null for an unknown org. */
export const listGrantsStandalone = async (config: ServerConfig, orgName: string): Promise<readonly OAuthGrant[] | null> => {
  const db = await openDatabase(config);
  try {
    const org = await db.stores.orgs.findByName(orgName)();
    if (E.isLeft(org)) throw new Error('Could not read the database', { cause: org.left });
    if (org.right === null) return null;
    const out: OAuthGrant[] = [];
    for (const mode of ['test', 'live'] as const) {
      const r = await listOAuthGrants({ stores: db.stores })({ orgId: org.right.id, mode })();
      if (E.isLeft(r)) throw new Error('Could not read the grants', { cause: r.left });
      out.push(...r.right);
    }
    return out;
  } finally {
    await db.close();
  }
};

/** `esig oauth grants revoke <id>`: the grant as it is now (revoked), or null for an unknown id. */
export const revokeGrantStandalone = async (config: ServerConfig, grantId: string): Promise<OAuthGrant | null> => {
  const db = await openDatabase(config);
  try {
    const r = await db.uow.transaction(revokeOAuthGrant({ clock: systemClock })(grantId))();
    if (E.isLeft(r)) throw new Error('Could not revoke the grant', { cause: r.left });
    return r.right;
  } finally {
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
  const db = await openDatabase(config, false, false);
  try {
    return await db.migrate();
  } finally {
    await db.close();
  }
};

