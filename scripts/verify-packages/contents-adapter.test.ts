// A contributor's adapter for one port, outside the repository: document contents in a Map (as an object
// store would keep them), the other ports from @esig/testkit's memory stores. `npm run verify:packages`
// runs this twice: the faithful adapter must pass its port's contract group, and one that stores only
// uploads (keyed by document id, as if only `doc_…` ids existed) must fail it.
import * as TE from 'fp-ts/lib/TaskEither.js';
import type { ContentKey, DocumentContentStore } from '@esig/core';
import { overridePorts, writingWhole } from '@esig/core';
import { createMemoryStores, describeStoreContract } from '@esig/testkit';

const mapContents = (): DocumentContentStore => {
  const blobs = new Map<string, Uint8Array>();
  const name = (t: { orgId: string; mode: string }, k: ContentKey) => JSON.stringify([t.orgId, t.mode, k]);
  return writingWhole({
    put: (t, k, bytes) => TE.fromIO(() => void blobs.set(name(t, k), Uint8Array.from(bytes))),
    get: (t, k) =>
      TE.fromIO(() => {
        const b = blobs.get(name(t, k));
        return b === undefined ? null : Uint8Array.from(b);
      }),
  });
};

/** Keys everything by a document id: the finished PDF and the certificate of a request collide. */
const documentsOnly = (): DocumentContentStore => {
  const blobs = new Map<string, Uint8Array>();
  const name = (t: { orgId: string; mode: string }, k: ContentKey) => JSON.stringify([t.orgId, t.mode, k.kind === 'upload' ? k.documentId : k.requestId]);
  return writingWhole({
    put: (t, k, bytes) => TE.fromIO(() => void blobs.set(name(t, k), Uint8Array.from(bytes))),
    get: (t, k) => TE.fromIO(() => blobs.get(name(t, k)) ?? null),
  });
};

const make = process.env.ESIG_CONTENTS === 'documents-only' ? documentsOnly : mapContents;

describeStoreContract(
  `document contents: ${process.env.ESIG_CONTENTS ?? 'map'}`,
  async () => {
    // One store for the harness: overridePorts builds the port anew for each transaction.
    const contents = make();
    return { ...overridePorts(createMemoryStores(), { documentContents: () => contents }), cleanup: async () => undefined };
  },
  { ports: ['documentContents'] },
);
