import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { CursorSigner, GrantedScope, Principal, Tenant } from '@esig/core';
import { DEFAULT_PAGE_LIMITS } from '@esig/core';
import { nodeCrypto } from '@esig/runtime-node';
import { createManualClock, createMemoryStores, createSequentialIds, fakePdfInspector, fakeStampPreflight, seededCrypto } from '@esig/testkit';
import { T0, TENANT } from './arbitraries.js';

/** The production cursor MAC: HMAC-SHA256 under a server key, compared in constant time. */
export const hmacCursorSigner = (key: string): CursorSigner => ({
  sign: (data) => nodeCrypto.hmacSha256Hex(key, data),
  verify: (data, mac) => nodeCrypto.timingSafeEqual(nodeCrypto.hmacSha256Hex(key, data), mac),
});

export const principal = (scopes: readonly GrantedScope[] = ['*'], tenant: Tenant = TENANT): Principal => ({
  tenant,
  scopes,
  credential: { kind: 'api_key', keyId: `key_${tenant.orgId}_${tenant.mode}` },
});

/** Fresh memory stores with deterministic time, ids and randomness. */
export const harness = () => {
  const { stores, uow } = createMemoryStores();
  const clock = createManualClock(new Date(T0));
  const ids = createSequentialIds();
  const crypto = seededCrypto('core-tests');
  const cursors = hmacCursorSigner('cursor-key');
  return { stores, uow, clock, ids, crypto, cursors, pdf: fakePdfInspector(), stamps: fakeStampPreflight(), pageLimits: DEFAULT_PAGE_LIMITS };
};
export type Harness = ReturnType<typeof harness>;

/** Runs a TaskEither and returns its Right, failing the test with the Left otherwise. */
export const right = async <A>(task: TE.TaskEither<unknown, A>): Promise<A> => {
  const r = await task();
  if (E.isLeft(r)) throw new Error(`expected Right, got Left ${JSON.stringify(r.left)}`);
  return r.right;
};

/** Runs a TaskEither and returns its Left, failing the test with the Right otherwise. */
export const left = async <L>(task: TE.TaskEither<L, unknown>): Promise<L> => {
  const r = await task();
  if (E.isRight(r)) throw new Error(`expected Left, got Right ${JSON.stringify(r.right)}`);
  return r.left;
};
