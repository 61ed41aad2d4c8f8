import type { AddressInfo } from 'node:net';
import express from 'express';
import * as E from 'fp-ts/lib/Either.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DomainError, SecretBox } from '@esig/core';
import { validationFailed } from '@esig/core';
import { createManualClock, createMemoryStores, createSequentialIds, seededCrypto } from '@esig/testkit';
import type { EsigHttpDeps } from '../src/deps.js';
import type { WriteOp } from '../src/route.js';
import { answeredFromKey, runWrite } from '../src/write-pipeline.js';

// What a write's handler set aside before its command (an upload's bytes, staged ahead of the transaction) is its
// command's once the command commits, and must be released on every other way out: a failure, a refusal, a replay,
// a key reused. The HTTP adapter's pipeline decides which, here with a store in memory and a real Express server.
const { stores, uow } = createMemoryStores();
const inClear: SecretBox = { seal: (s) => s, open: (s) => E.right(s) };
const deps = { stores, uow, clock: createManualClock('2026-12-01T00:00:00.000Z'), ids: createSequentialIds(), crypto: seededCrypto('write-pipeline'), secrets: inClear } as unknown as EsigHttpDeps;
const TENANT = { orgId: 'org_1', mode: 'test' } as const;

/** The command each call runs, by its body: `ok` commits, `refuse` fails with a stored refusal. */
const released: string[] = [];
let handled = 0;
const opFor = (body: string): WriteOp<unknown> => ({
  command: () => (body === 'refuse' ? TE.left<DomainError, unknown>(validationFailed([{ path: 'x', message: 'no' }])) : TE.right({ body })),
  status: 201,
  present: (a) => a,
  release: async () => void released.push(body),
});

let url = '';
let close = () => undefined as unknown;
beforeAll(async () => {
  const app = express();
  app.use(express.text({ type: '*/*' }));
  app.post('/w', async (req, res) => {
    res.locals.requestId = 'log_1';
    const key = req.header('idempotency-key');
    // A signing link's call (`x-link`), or an API client's.
    const link = req.header('x-link');
    const caller = link ? { tenant: TENANT, credential: `link:${link}`, requestId: 'log_1', keySpace: `link:${link}:` } : { tenant: TENANT, credential: 'key_1', requestId: 'log_1' };
    const o = { key, caller, sealResponse: false };
    if (req.query.first === '1' && key !== undefined && (await answeredFromKey(deps, req, res, { ...o, key }))) return;
    handled++;
    await runWrite(deps, req, res, o, opFor(String(req.body)));
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((ok) => server.once('listening', ok));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/w`;
  close = () => server.close();
});
afterAll(() => close());

const post = async (body: string, key?: string, first = false, link?: string) => {
  const r = await fetch(`${url}${first ? '?first=1' : ''}`, { method: 'POST', body, headers: { 'content-type': 'text/plain', ...(key ? { 'idempotency-key': key } : {}), ...(link ? { 'x-link': link } : {}) } });
  return { status: r.status, replayed: r.headers.get('idempotency-replayed') === 'true', body: (await r.json()) as { code?: string } };
};
/** What was released by the call `f` makes: the release runs after the answer is sent. */
const releasedBy = async (f: () => Promise<unknown>) => {
  released.length = 0;
  const r = await f();
  await new Promise((ok) => setImmediate(ok));
  return { r, released: [...released] };
};

describe('a write’s set-aside work', () => {
  it('stays the command’s when it commits, and is released when it does not', async () => {
    expect(await releasedBy(() => post('ok'))).toMatchObject({ r: { status: 201 }, released: [] });
    expect(await releasedBy(() => post('refuse'))).toMatchObject({ r: { status: 400 }, released: ['refuse'] });
  });

  it('under an Idempotency-Key: kept by the first call, released by a replay and by a key reused for another body', async () => {
    expect(await releasedBy(() => post('ok', 'k1'))).toMatchObject({ r: { status: 201, replayed: false }, released: [] });
    expect(await releasedBy(() => post('ok', 'k1'))).toMatchObject({ r: { status: 201, replayed: true }, released: ['ok'] });
    expect(await releasedBy(() => post('refuse', 'k1'))).toMatchObject({ r: { status: 422, body: { code: 'idempotency_key_reused' } }, released: ['refuse'] });
    // A stored refusal is replayed as such, and what the replay set aside released too.
    expect(await releasedBy(() => post('refuse', 'k2'))).toMatchObject({ r: { status: 400 }, released: ['refuse'] });
    expect(await releasedBy(() => post('refuse', 'k2'))).toMatchObject({ r: { status: 400, replayed: true }, released: ['refuse'] });
  });

  it('an API client’s key never names a signing link’s record, whatever it spells', async () => {
    // A link's keys are named `link:<token hash>:<key>`; the organization can compute the hash of a link it holds.
    for (const first of [false, true]) {
      const hash = `h${first ? 1 : 0}`;
      expect(await post('ok', `link:${hash}:k5`, first), 'the API client, first').toMatchObject({ status: 201, replayed: false });
      expect(await post('ok', 'k5', first, hash), 'the link, after').toMatchObject({ status: 201, replayed: false });
      // Each replays its own, and the escape keeps the mapping one to one.
      expect(await post('ok', `link:${hash}:k5`, first)).toMatchObject({ status: 201, replayed: true });
      expect(await post('ok', `api:link:${hash}:k5`, first)).toMatchObject({ status: 201, replayed: false });
    }
  });

  it('a route that looks its key up first answers a replay and a key reused without doing its work', async () => {
    expect((await post('ok', 'k3', true)).status).toBe(201);
    const before = handled;
    expect(await post('ok', 'k3', true)).toMatchObject({ status: 201, replayed: true });
    expect(await post('other', 'k3', true)).toMatchObject({ status: 422, body: { code: 'idempotency_key_reused' } });
    expect(handled).toBe(before);
    // A key not seen yet goes on to the command, which decides on it.
    expect(await post('ok', 'k4', true)).toMatchObject({ status: 201, replayed: false });
    expect(handled).toBe(before + 1);
  });
});
