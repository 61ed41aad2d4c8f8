import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { describe, expect, it } from 'vitest';
import type { Stores } from '@esig/core';
import { createMemoryStores } from '../src/memory-stores.js';
import { TENANT_A, makeDocument, makeSignatureRequest, ok } from '../src/builders.js';
import { describeStoreContract } from '../src/store-contract.js';

describeStoreContract('memory', async () => ({ ...createMemoryStores(), cleanup: async () => undefined }));

describe('memory stores, beyond the shared contract', () => {
  it('hands out copies: mutating a returned or inserted object changes nothing stored', async () => {
    const { stores } = createMemoryStores();
    const req = makeSignatureRequest(TENANT_A);
    const original = structuredClone(req);
    await ok(stores.signatureRequests.insert(req));
    (req.recipients[0] as { email: string }).email = 'changed@example.com';
    const got = (await ok(stores.signatureRequests.findById(TENANT_A, req.id)))!;
    expect(got).toEqual(original);
    (got.fields as unknown[]).length = 0;
    (got as { title: string }).title = 'changed';
    const listed = await ok(stores.signatureRequests.list(TENANT_A, { limit: 5, order: 'asc', after: null, filter: {} }));
    (listed.items[0]!.documentIds as string[]).push('doc_x');
    expect(await ok(stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(original);
  });

  it('runs transactions one at a time, first come first served', async () => {
    const { uow } = createMemoryStores();
    const log: string[] = [];
    const work = (name: string, yields: number) =>
      uow.transaction(() => async () => {
        log.push(`${name}:start`);
        for (let i = 0; i < yields; i++) await Promise.resolve();
        log.push(`${name}:end`);
        return E.right(name);
      })();
    const results = await Promise.all([work('a', 5), work('b', 0), work('c', 2)]);
    expect(results).toEqual([E.right('a'), E.right('b'), E.right('c')]);
    expect(log).toEqual(['a:start', 'a:end', 'b:start', 'b:end', 'c:start', 'c:end']);
  });

  it('a top-level write waits for the running transaction and is not lost when it commits', async () => {
    const { stores, uow } = createMemoryStores();
    const inTx = makeDocument(TENANT_A);
    const outside = makeDocument(TENANT_A);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const tx = uow.transaction((s) => pipe(s.documents.insert(inTx), TE.chainFirstTaskK(() => () => gate)))();
    const write = stores.documents.insert(outside)();
    release();
    expect(E.isRight(await tx) && E.isRight(await write)).toBe(true);
    for (const d of [inTx, outside]) expect(await ok(stores.documents.findById(TENANT_A, d.id))).toEqual(d);
  });

  it('refuses store calls on a transaction that has ended', async () => {
    const { uow } = createMemoryStores();
    let leaked: Stores | undefined;
    await uow.transaction((tx) => {
      leaked = tx;
      return TE.right(undefined);
    })();
    const late = await leaked!.documents.insert(makeDocument(TENANT_A))();
    expect(E.isLeft(late) && late.left._tag).toBe('StoreFailure');
  });

  it('fails an invalid keyset query instead of guessing', async () => {
    const { stores } = createMemoryStores();
    const r = await stores.documents.list(TENANT_A, { limit: -1, order: 'asc', after: null, filter: {} })();
    expect(E.isLeft(r) && r.left._tag).toBe('StoreFailure');
  });
});
