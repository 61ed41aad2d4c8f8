import type { AddressInfo } from 'node:net';
import express from 'express';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SecretBox } from '@esig/core';
import { createManualClock, createMemoryStores, createSequentialIds, seededCrypto } from '@esig/testkit';
import type { EsigHttpDeps } from '../src/deps.js';
import { answeredFromKey, runWrite } from '../src/write-pipeline.js';

// An upload's route looks its key up before its handler (lookUpKeyFirst) and decides on it again with its command:
// both name the key's record by the call's fingerprint, a digest of the whole file. The file is hashed on the API's
// event loop (the PDF thread hashes it for the document, so that this loop need not): once a call, not twice.
const { stores, uow } = createMemoryStores();
const inClear: SecretBox = { seal: (s) => s, open: (s) => E.right(s) };
const crypto = seededCrypto('fingerprint-once');
const FILE_BYTES = 1_000_003;
/** How many times a digest was taken of the whole file. */
let fileHashes = 0;
const counting = {
  ...crypto,
  sha256Hex: (d: Uint8Array | string) => {
    if (typeof d !== 'string' && d.byteLength === FILE_BYTES) fileHashes++;
    return crypto.sha256Hex(d);
  },
};
const deps = { stores, uow, clock: createManualClock('2026-12-01T00:00:00.000Z'), ids: createSequentialIds(), crypto: counting, secrets: inClear } as unknown as EsigHttpDeps;
const TENANT = { orgId: 'org_1', mode: 'test' } as const;

let url = '';
let close = () => undefined as unknown;
beforeAll(async () => {
  const app = express();
  app.use(express.raw({ type: '*/*', limit: '10mb' }));
  // As the app runs a route marked lookUpKeyFirst (app.ts `handle`).
  app.post('/upload', async (req, res) => {
    res.locals.requestId = 'log_1';
    const key = req.header('idempotency-key')!;
    const o = { key, caller: { tenant: TENANT, credential: 'key_1', requestId: 'log_1' }, sealResponse: false };
    if (await answeredFromKey(deps, req, res, o)) return;
    await runWrite(deps, req, res, o, { command: () => TE.right({ id: 'doc_1' }), status: 201, present: (a) => a });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/upload`;
  close = () => server.close();
});
afterAll(() => close());

const upload = async (key: string) => {
  const r = await fetch(url, { method: 'POST', body: new Uint8Array(FILE_BYTES).fill(7), headers: { 'content-type': 'application/pdf', 'idempotency-key': key } });
  return { status: r.status, replayed: r.headers.get('idempotency-replayed') === 'true' };
};

describe('a keyed upload’s fingerprint', () => {
  it('is taken of the file once, though the key is looked up twice', async () => {
    fileHashes = 0;
    expect(await upload('once-1')).toEqual({ status: 201, replayed: false });
    expect(fileHashes).toBe(1);
    // A replay is answered from the first look-up: once too.
    fileHashes = 0;
    expect(await upload('once-1')).toEqual({ status: 201, replayed: true });
    expect(fileHashes).toBe(1);
  });
});
