import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from 'fp-ts/lib/TaskEither.js';
import { beforeEach, describe, expect, it } from 'vitest';
import type { Command, DomainError, IdempotencyContext, IdempotencyRecord, StoredResponse, Tenant, TransactionOptions, UnitOfWork } from '@esig/core';
import { IDEMPOTENCY_LOCK_MS, answeredAlready, IDEMPOTENCY_TTL_MS, canonicalJson, execute, executeIdempotently, fingerprintSource, invalidState, overridePorts, IDEMPOTENCY_PURGE_GRACE_MS, purgeExpiredIdempotencyRecords, storeFailure } from '@esig/core';
import { decideIdempotency } from '@esig/core/internal';
import { OTHER_TENANTS, TENANT, documentRow, fingerprintArb, idempotencyRecordArb, iso, jsonArb, nowArb } from './arbitraries.js';
import type { Harness } from './support.js';
import { harness, left, right } from './support.js';
import { randomBytes } from 'node:crypto';
import { createAesGcmSecretBox } from '@esig/runtime-node';

const secrets = createAesGcmSecretBox(randomBytes(32));

// ------------------------------------------------------------------ the pure rule

describe('decideIdempotency', () => {
  it('decides by expiry, then fingerprint, then state, then lock', () => {
    fc.assert(
      fc.property(idempotencyRecordArb, nowArb, fc.boolean(), fingerprintArb, ({ at }, now, sameFp, otherFp) => {
        const record = at(now);
        const fp = sameFp ? record.fingerprint : otherFp;
        const d = decideIdempotency(record, fp, new Date(now));
        const nowIso = iso(now);
        if (record.expiresAt <= nowIso) expect(d).toEqual({ _tag: 'Proceed' });
        else if (fp !== record.fingerprint) expect(d).toEqual({ _tag: 'Conflict' });
        else if (record.state === 'completed') expect(d).toEqual({ _tag: 'Replay', record });
        else if (record.lockedUntil > nowIso) expect(d).toEqual({ _tag: 'InProgress' });
        else expect(d).toEqual({ _tag: 'TakeOver' });
      }),
      { numRuns: 1000 },
    );
  });

  it('proceeds without a record, and conflicts on another fingerprint even while in progress', () => {
    fc.assert(
      fc.property(fingerprintArb, nowArb, (fp, now) => {
        expect(decideIdempotency(null, fp, new Date(now))).toEqual({ _tag: 'Proceed' });
        const inFlight: IdempotencyRecord = {
          tenant: TENANT,
          key: 'k',
          fingerprint: `${fp}x`,
          state: 'in_progress',
          response: null,
          createdAt: iso(now),
          lockedUntil: iso(now + IDEMPOTENCY_LOCK_MS),
          expiresAt: iso(now + IDEMPOTENCY_TTL_MS),
        };
        expect(decideIdempotency(inFlight, fp, new Date(now))).toEqual({ _tag: 'Conflict' });
        expect(decideIdempotency(inFlight, `${fp}x`, new Date(now))).toEqual({ _tag: 'InProgress' });
        expect(decideIdempotency(inFlight, `${fp}x`, new Date(now + IDEMPOTENCY_LOCK_MS))).toEqual({ _tag: 'TakeOver' });
        expect(decideIdempotency(inFlight, fp, new Date(now + IDEMPOTENCY_TTL_MS))).toEqual({ _tag: 'Proceed' });
      }),
    );
  });
});

describe('answeredAlready', () => {
  it('reads what the key’s record decides, as executeIdempotently would, and writes nothing', async () => {
    await fc.assert(
      fc.asyncProperty(idempotencyRecordArb, nowArb, fc.boolean(), fingerprintArb, async ({ at }, now, sameFp, otherFp) => {
        const h = harness();
        h.clock.set(new Date(now));
        // Stored as a call kept in clear keeps it.
        const record = at(now);
        const stored: IdempotencyRecord = record.response === null ? record : { ...record, response: { ...record.response, inClear: true as const } };
        await right(h.uow.transaction((tx) => tx.idempotency.insertIfAbsent(stored)));
        const fingerprint = sameFp ? record.fingerprint : otherFp;
        const r = await answeredAlready({ ...h, secrets })({ tenant: TENANT, key: record.key, fingerprint, sealResponse: false })();
        const d = decideIdempotency(stored, fingerprint, new Date(now));
        if (d._tag === 'Replay') expect(r).toEqual(E.right(record.response));
        else if (d._tag === 'Conflict') expect(r).toEqual(E.left(expect.objectContaining({ _tag: 'IdempotencyKeyReused' })));
        else if (d._tag === 'InProgress') expect(r).toEqual(E.left(expect.objectContaining({ _tag: 'IdempotencyInProgress' })));
        else expect(r).toEqual(E.right(null));
        // Only a read: the record is as it was, and no other key's was made.
        expect(await right(h.stores.idempotency.find(TENANT, record.key))).toEqual(stored);
      }),
      { numRuns: 300 },
    );
  });

  it('answers null for a key with no record, and a sealed answer opened', async () => {
    const h = harness();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'f' };
    expect(await answeredAlready({ ...h, secrets })(ctx)()).toEqual(E.right(null));
    const response: StoredResponse = { status: 201, body: '{"id":"doc_1"}', headers: { 'content-type': 'application/json' } };
    const first = await right(executeIdempotently({ ...h, secrets })(ctx, () => TE.right(1), () => response));
    expect(first.replayed).toBe(false);
    // Stored sealed, answered opened.
    expect((await right(h.stores.idempotency.find(TENANT, 'k')))!.response!.body).not.toContain('doc_1');
    expect(await answeredAlready({ ...h, secrets })(ctx)()).toEqual(E.right(response));
  });
});

// ------------------------------------------------------------------ canonical JSON

/** The same value with the keys of every object in another order (an LCG seeded by `seed` picks it). */
const reorder = (v: unknown, seed: number): unknown => {
  let s = seed >>> 0;
  const rnd = () => (s = (Math.imul(s, 1_103_515_245) + 12_345) >>> 0) / 2 ** 32;
  const go = (x: unknown): unknown => {
    if (Array.isArray(x)) return x.map(go);
    if (x === null || typeof x !== 'object') return x;
    const entries = Object.entries(x).map(([k, y]) => [k, go(y)] as const);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rnd() * (i + 1));
      [entries[i], entries[j]] = [entries[j]!, entries[i]!];
    }
    return Object.fromEntries(entries);
  };
  return go(v);
};

describe('fingerprintSource', () => {
  const part = fc.string({ minLength: 1, maxLength: 20 }).filter((x) => !x.includes('\n'));
  const input = fc.record({ credential: part, method: fc.constantFrom('POST', 'PATCH', 'DELETE'), path: part, bodyDigest: fc.stringMatching(/^[0-9a-f]{64}$/) });
  it('binds the fingerprint to the credential: inputs that differ anywhere give different sources', () => {
    fc.assert(
      fc.property(input, input, (a, b) => {
        if (isDeepStrictEqual(a, b)) expect(fingerprintSource(a)).toBe(fingerprintSource(b));
        else expect(fingerprintSource(a)).not.toBe(fingerprintSource(b));
        expect(fingerprintSource({ ...a, credential: `${a.credential}x` })).not.toBe(fingerprintSource(a));
      }),
    );
  });
});

describe('canonicalJson', () => {
  it('does not depend on key order', () => {
    fc.assert(
      fc.property(jsonArb, fc.integer(), (v, seed) => {
        expect(canonicalJson(reorder(v, seed))).toBe(canonicalJson(v));
        expect(canonicalJson(structuredClone(v))).toBe(canonicalJson(v));
      }),
      { numRuns: 300 },
    );
  });

  it('is valid JSON for the same value, so different values give different text', () => {
    fc.assert(
      fc.property(jsonArb, (v) => {
        expect(isDeepStrictEqual(JSON.parse(canonicalJson(v)), v)).toBe(true);
      }),
      { numRuns: 300 },
    );
    fc.assert(
      fc.property(jsonArb, jsonArb, (a, b) => {
        expect(canonicalJson(a) === canonicalJson(b)).toBe(isDeepStrictEqual(a, b));
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart values that differ only deep inside', () => {
    expect(canonicalJson({ a: [1, { b: '1' }] })).not.toBe(canonicalJson({ a: [1, { b: 1 }] }));
    expect(canonicalJson({ a: null })).not.toBe(canonicalJson({}));
    expect(canonicalJson(['a,b'])).not.toBe(canonicalJson(['a', 'b']));
    expect(canonicalJson({ 'a":1,"b': 2 })).not.toBe(canonicalJson({ a: 1, b: 2 }));
  });
});

// ------------------------------------------------------------------ executeIdempotently on memory stores

interface Probe {
  runs: number;
  /** When set, the next run fails this way (after writing a document, which must then be rolled back). */
  failNext: DomainError | null;
}

/** A command that writes a document, counts its runs, and answers `body`. */
const writeDoc =
  (h: Harness, probe: Probe, tenant: Tenant, body: unknown): Command<{ id: string; body: unknown }> =>
  (tx) => {
    probe.runs++;
    const doc = documentRow(h.ids.next('doc'), h.clock.now().toISOString(), tenant);
    const fail = probe.failNext;
    probe.failNext = null;
    return pipe(
      tx.documents.insert(doc),
      TE.chainW(() => (fail ? TE.left(fail) : TE.right({ id: doc.id, body }))),
    );
  };

/** What an HTTP adapter would store: successes and domain errors; a store failure is not stored (null). */
const render = (r: E.Either<DomainError, { id: string; body: unknown }>): StoredResponse | null =>
  E.isRight(r)
    ? { status: 201, body: canonicalJson(r.right), headers: { 'content-type': 'application/json' } }
    : r.left._tag === 'StoreFailure' || r.left._tag === 'ConcurrentModification'
      ? null
      : { status: 409, body: canonicalJson({ code: r.left._tag }), headers: { 'content-type': 'application/problem+json' } };

/**
 * How the stores run transactions: one at a time (the memory stores, as SQLite: claim and command in one
 * transaction), or side by side (as PostgreSQL: the claim commits first, through the top-level stores).
 */
type UowMode = 'serial' | 'side by side';
let uowMode: UowMode = 'serial';

const setup = () => {
  const h = harness();
  const probe: Probe = { runs: 0, failNext: null };
  const exec =
    uowMode === 'serial'
      ? executeIdempotently({ uow: h.uow, clock: h.clock, secrets })
      : executeIdempotently({ uow: { transaction: h.uow.transaction, serial: false }, clock: h.clock, secrets, stores: h.stores });
  const call = (ctx: IdempotencyContext, body: unknown = { n: 1 }, r = render) => exec(ctx, writeDoc(h, probe, ctx.tenant, body), r);
  const docCount = async (tenant: Tenant = TENANT) =>
    (await right(h.stores.documents.list(tenant, { limit: 100, order: 'asc', after: null, filter: {} }))).items.length;
  return { h, probe, call, docCount };
};

const ctxArb = fc.record({ key: fc.string({ minLength: 1, maxLength: 255 }), fingerprint: fingerprintArb }).map((c) => ({ ...c, tenant: TENANT }));

/** A claim of `key` made at `now` by a caller still running it (for TENANT, fingerprint `fp` unless told). */
const claimAt = (now: number, key = 'k', fingerprint = 'fp'): IdempotencyRecord => ({
  tenant: TENANT,
  key,
  fingerprint,
  state: 'in_progress',
  response: null,
  createdAt: iso(now),
  lockedUntil: iso(now + IDEMPOTENCY_LOCK_MS),
  expiresAt: iso(now + IDEMPOTENCY_TTL_MS),
});

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await Promise.resolve();
};

describe.each(['serial', 'side by side'] as const)('executeIdempotently, transactions %s', (mode) => {
  beforeEach(() => {
    uowMode = mode;
  });
  it('replays the first response byte for byte and runs the command once', async () => {
    await fc.assert(
      fc.asyncProperty(ctxArb, jsonArb, fc.integer({ min: 1, max: 4 }), async (ctx, body, replays) => {
        const { probe, call, docCount } = setup();
        const first = await right(call(ctx, body));
        expect(first.replayed).toBe(false);
        for (let i = 0; i < replays; i++) {
          const again = await right(call(ctx, body));
          expect(again.replayed).toBe(true);
          expect(again.response.body).toBe(first.response.body);
          expect(again.response).toEqual(first.response);
        }
        expect(probe.runs).toBe(1);
        expect(await docCount()).toBe(1);
      }),
      { numRuns: 60 },
    );
  });

  it('runs the command exactly once for 25 concurrent calls with one key', async () => {
    await fc.assert(
      fc.asyncProperty(ctxArb, fc.array(fc.nat(40), { minLength: 25, maxLength: 25 }), async (ctx, delays) => {
        const { probe, call, docCount } = setup();
        const results = await Promise.all(
          delays.map(async (d) => {
            await ticks(d);
            return call(ctx)();
          }),
        );
        expect(probe.runs).toBe(1);
        expect(await docCount()).toBe(1);
        const fresh = results.filter((r) => E.isRight(r) && !r.right.replayed);
        expect(fresh).toHaveLength(1);
        const firstBody = E.isRight(fresh[0]!) ? fresh[0].right.response.body : '';
        for (const r of results) {
          if (E.isRight(r)) expect(r.right.response.body).toBe(firstBody);
          else expect(r.left).toEqual({ _tag: 'IdempotencyInProgress' });
        }
        // Afterwards, every call is a replay.
        expect(await right(call(ctx))).toMatchObject({ replayed: true, response: { body: firstBody } });
      }),
      { numRuns: 40 },
    );
  });

  it('refuses the key for a different request, finished or in flight', async () => {
    await fc.assert(
      fc.asyncProperty(ctxArb, fingerprintArb, async (ctx, other) => {
        fc.pre(other !== ctx.fingerprint);
        const { h, probe, call } = setup();
        await right(call(ctx));
        expect(await left(call({ ...ctx, fingerprint: other }))).toEqual({ _tag: 'IdempotencyKeyReused' });
        // In flight: a holder has claimed a second key and not finished.
        const key2 = { ...ctx, key: ctx.key === 'in-flight' ? 'in-flight-2' : 'in-flight' };
        const now = h.clock.now().getTime();
        await right(h.stores.idempotency.insertIfAbsent(claimAt(now, key2.key, ctx.fingerprint)));
        expect(await left(call({ ...key2, fingerprint: other }))).toEqual({ _tag: 'IdempotencyKeyReused' });
        expect(await left(call(key2))).toEqual({ _tag: 'IdempotencyInProgress' });
        expect(probe.runs).toBe(1);
      }),
      { numRuns: 40 },
    );
  });

  it('answers InProgress, without running, when it loses the insert race to a concurrent claim', async () => {
    // Under read committed, `find` may miss a claim that commits just before `insertIfAbsent`: simulate that
    // interleaving by hiding the competitor's record from the first `find`.
    const { h, probe } = setup();
    const now = h.clock.now().getTime();
    const competitor = claimAt(now);
    await right(h.stores.idempotency.insertIfAbsent(competitor));
    let hidden = false;
    const racyUow: UnitOfWork = {
      transaction: (work) =>
        h.uow.transaction((tx) =>
          work({
            ...tx,
            idempotency: {
              ...tx.idempotency,
              find: (t, key) => (hidden ? tx.idempotency.find(t, key) : ((hidden = true), TE.right(null))),
            },
          }),
        ),
    };
    const exec = executeIdempotently({ uow: racyUow, clock: h.clock, secrets });
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    expect(await left(exec(ctx, writeDoc(h, probe, TENANT, {}), render))).toEqual({ _tag: 'IdempotencyInProgress' });
    expect(probe.runs).toBe(0);
    expect(await right(h.stores.idempotency.find(TENANT, 'k'))).toEqual(competitor);
  });

  it('lets another caller take over when the holder’s lock has expired', async () => {
    const { h, probe, call } = setup();
    const ctx = { tenant: TENANT, key: 'k1', fingerprint: 'fp' };
    const now = h.clock.now().getTime();
    const crashed = claimAt(now, 'k1');
    await right(h.stores.idempotency.insertIfAbsent(crashed));
    h.clock.advance(IDEMPOTENCY_LOCK_MS - 1);
    expect(await left(call(ctx))).toEqual({ _tag: 'IdempotencyInProgress' });
    h.clock.advance(1);
    expect(await right(call(ctx))).toMatchObject({ replayed: false });
    expect(probe.runs).toBe(1);
    const record = await right(h.stores.idempotency.find(TENANT, 'k1'));
    expect(record).toMatchObject({ state: 'completed', createdAt: crashed.createdAt, expiresAt: crashed.expiresAt });
  });

  it('releases the key after a store failure, so a retry runs', async () => {
    const { h, probe, call, docCount } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    probe.failNext = storeFailure(new Error('disk full'));
    expect(await left(call(ctx))).toMatchObject({ _tag: 'StoreFailure' });
    expect(await right(h.stores.idempotency.find(TENANT, 'k'))).toBeNull();
    expect(await docCount()).toBe(0);
    expect(await right(call(ctx))).toMatchObject({ replayed: false });
    expect(probe.runs).toBe(2);
    expect(await docCount()).toBe(1);
  });

  it('releases the key and keeps nothing when the response cannot be rendered', async () => {
    const { h, probe, call, docCount } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    const noRender = (r: E.Either<DomainError, { id: string; body: unknown }>) => (E.isRight(r) ? null : render(r));
    expect(await left(call(ctx, {}, noRender))).toMatchObject({ _tag: 'StoreFailure' });
    expect(await docCount()).toBe(0);
    expect(await right(h.stores.idempotency.find(TENANT, 'k'))).toBeNull();
    expect(await right(call(ctx))).toMatchObject({ replayed: false });
    expect(probe.runs).toBe(2);
  });

  it('stores a domain error and replays it, with the failed command’s writes rolled back', async () => {
    const { probe, call, docCount } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    probe.failNext = invalidState('already sent');
    const first = await right(call(ctx));
    expect(first).toMatchObject({ replayed: false, response: { status: 409 } });
    const again = await right(call(ctx));
    expect(again).toEqual({ ...first, replayed: true });
    expect(probe.runs).toBe(1);
    expect(await docCount()).toBe(0);
  });

  it('frees the key once the record has expired (24 h)', async () => {
    const { h, probe, call } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    const first = await right(call(ctx, { v: 1 }));
    h.clock.advance(IDEMPOTENCY_TTL_MS - 1);
    expect(await right(call(ctx, { v: 2 }))).toEqual({ ...first, replayed: true });
    h.clock.advance(2);
    const fresh = await right(call(ctx, { v: 2 }));
    expect(fresh.replayed).toBe(false);
    expect(fresh.response.body).not.toBe(first.response.body);
    h.clock.advance(IDEMPOTENCY_TTL_MS + 1);
    // Even another request may use the key now.
    expect(await right(call({ ...ctx, fingerprint: 'other' }, { v: 3 }))).toMatchObject({ replayed: false });
    expect(probe.runs).toBe(3);
  });

  it('stores the response sealed (a minted secret never rests in clear) and replays it opened', async () => {
    const { h, call } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    const first = await right(call(ctx, { secret: 'esig_test_supersecretvalue000000000000' }));
    const record = await right(h.stores.idempotency.find(TENANT, 'k'));
    expect(record!.response!.body).not.toContain('supersecret');
    expect(secrets.open(record!.response!.body)).toEqual(E.right(first.response.body));
    expect(await right(call(ctx, { secret: 'esig_test_supersecretvalue000000000000' }))).toEqual({ ...first, replayed: true });
  });

  it('keeps a response whose caller says it holds no secret as sent, marked so, and replays it; the default beside it stays sealed', async () => {
    const { h, probe, call } = setup();
    const clear = { tenant: TENANT, key: 'clear', fingerprint: 'fp', sealResponse: false };
    const first = await right(call(clear, { title: 'NDA' }));
    expect(await right(h.stores.idempotency.find(TENANT, 'clear'))).toMatchObject({ state: 'completed', response: { ...first.response, inClear: true } });
    const replay = await right(call(clear, { title: 'NDA' }));
    // Replayed as it was first answered, without the mark: that is the store's, not the response's.
    expect(replay).toEqual({ ...first, replayed: true });
    expect(replay.response).not.toHaveProperty('inClear');

    const sealed = { tenant: TENANT, key: 'sealed', fingerprint: 'fp' };
    const other = await right(call(sealed, { title: 'NDA' }));
    const record = await right(h.stores.idempotency.find(TENANT, 'sealed'));
    expect(record!.response).not.toHaveProperty('inClear');
    expect(secrets.open(record!.response!.body)).toEqual(E.right(other.response.body));
    expect(probe.runs).toBe(2);
  });

  it('replays a sealed record (as every record before the mark) to a call that now stores in clear', async () => {
    const { probe, call } = setup();
    const sealed = await right(call({ tenant: TENANT, key: 'k', fingerprint: 'fp' }));
    expect(await right(call({ tenant: TENANT, key: 'k', fingerprint: 'fp', sealResponse: false }))).toEqual({ ...sealed, replayed: true });
    expect(probe.runs).toBe(1);
  });

  it('replays no record marked in clear to a sealed call: such a row was not written by it', async () => {
    const { h, probe, call } = setup();
    await right(call({ tenant: TENANT, key: 'k', fingerprint: 'fp', sealResponse: false }));
    // As a row forged in the database would be: in clear, marked, under a key whose calls are sealed.
    expect(await left(call({ tenant: TENANT, key: 'k', fingerprint: 'fp' }))).toMatchObject({ _tag: 'StoreFailure' });
    expect(await right(h.stores.idempotency.find(TENANT, 'k'))).toMatchObject({ state: 'completed', response: { inClear: true } });
    expect(probe.runs).toBe(1);
  });

  it('keeps an outcome stored after its command failed as the caller asked, in clear or sealed', async () => {
    for (const sealResponse of [false, true]) {
      const { h, probe, call } = setup();
      const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp', sealResponse };
      probe.failNext = invalidState('already sent');
      const first = await right(call(ctx));
      expect(first.response.status).toBe(409);
      const record = await right(h.stores.idempotency.find(TENANT, 'k'));
      if (sealResponse) expect(secrets.open(record!.response!.body)).toEqual(E.right(first.response.body));
      else expect(record!.response).toEqual({ ...first.response, inClear: true });
      expect(await right(call(ctx))).toEqual({ ...first, replayed: true });
    }
  });

  it('answers a store failure, not a foreign response, when a record was sealed under another key', async () => {
    const { h, call } = setup();
    const ctx = { tenant: TENANT, key: 'k', fingerprint: 'fp' };
    await right(call(ctx));
    const other = executeIdempotently({ uow: h.uow, clock: h.clock, secrets: createAesGcmSecretBox(randomBytes(32)) });
    expect(await left(other(ctx, () => TE.right({ id: 'x', body: 1 }), render))).toMatchObject({ _tag: 'StoreFailure' });
  });

  it('keeps keys of different tenants apart', async () => {
    const { probe, call, docCount } = setup();
    for (const tenant of [TENANT, ...OTHER_TENANTS]) {
      expect(await right(call({ tenant, key: 'same', fingerprint: 'fp' }))).toMatchObject({ replayed: false });
      expect(await docCount(tenant)).toBe(1);
    }
    expect(probe.runs).toBe(3);
  });

  it('purging leaves every live record, so a replay still replays; past the TTL and its grace it frees the key', async () => {
    await fc.assert(
      fc.asyncProperty(fc.uniqueArray(ctxArb, { minLength: 1, maxLength: 6, selector: (c) => c.key }), fc.integer({ min: 1, max: 4 }), async (ctxs, batch) => {
        const { h, probe, call } = setup();
        for (const ctx of ctxs) await right(call(ctx));
        const purge = purgeExpiredIdempotencyRecords({ stores: h.stores, clock: h.clock });
        // One millisecond short of the TTL, nothing has expired: every call replays, nothing runs again.
        h.clock.advance(IDEMPOTENCY_TTL_MS - 1);
        expect(await right(purge(batch))).toBe(0);
        for (const ctx of ctxs) expect(await right(call(ctx))).toMatchObject({ replayed: true });
        expect(probe.runs).toBe(ctxs.length);
        // Expired, but within the grace that covers other processes' clocks: still not deleted.
        h.clock.advance(IDEMPOTENCY_PURGE_GRACE_MS);
        expect(await right(purge(batch))).toBe(0);
        for (const ctx of ctxs) expect(await right(h.stores.idempotency.find(ctx.tenant, ctx.key))).not.toBeNull();
        // Past the grace every record goes; batches of `batch` take them all, a short batch says so.
        h.clock.advance(1);
        let purged = 0;
        for (let n = batch; n === batch; purged += n) n = await right(purge(batch));
        expect(purged).toBe(ctxs.length);
        for (const ctx of ctxs) expect(await right(h.stores.idempotency.find(ctx.tenant, ctx.key))).toBeNull();
        // A key purged is a key never seen: the call runs.
        expect(await right(call(ctxs[0]!))).toMatchObject({ replayed: false });
        expect(probe.runs).toBe(ctxs.length + 1);
      }),
      { numRuns: 40 },
    );
  });
});

describe('purgeExpiredIdempotencyRecords', () => {
  it('starts each full batch of a run where the last one ended, and each new run from the first record', async () => {
    const h = harness();
    const seen: Array<string | null | undefined> = [];
    const stores = { ...h.stores, idempotency: { ...h.stores.idempotency, purgeExpired: (now: string, limit: number, from?: string | null) => (seen.push(from), h.stores.idempotency.purgeExpired(now, limit, from)) } };
    const expiries = [1, 2, 2, 3, 4].map((s) => iso(Date.parse(iso(0)) + s * 1000));
    for (const [i, expiresAt] of expiries.entries())
      await right(h.stores.idempotency.insertIfAbsent({ tenant: TENANT, key: `k${i}`, fingerprint: 'fp', state: 'completed', response: null, createdAt: iso(0), lockedUntil: iso(0), expiresAt }));
    h.clock.set(new Date(Date.parse(expiries[4]!) + IDEMPOTENCY_PURGE_GRACE_MS));
    const purge = purgeExpiredIdempotencyRecords({ stores, clock: h.clock });
    expect(await right(purge(2))).toBe(2); // k0 (1 s) and one of the two at 2 s
    expect(await right(purge(2))).toBe(2); // from 2 s: the other at 2 s, and 3 s
    expect(await right(purge(2))).toBe(1); // from 3 s: 4 s; a short batch ends the run
    expect(await right(purge(2))).toBe(0);
    expect(seen).toEqual([null, expiries[1], expiries[3], null]);
  });
});

describe('the transactions a command runs in', () => {
  /** The harness's unit of work, noting the options each transaction is asked with. */
  const noting = (h: Harness, serial: boolean) => {
    const asked: Array<TransactionOptions | undefined> = [];
    const uow: UnitOfWork = {
      // Noted when the transaction runs, not when it is built (a use case may build one it never runs).
      transaction: ((work, options) => () => {
        asked.push(options);
        return h.uow.transaction(work, options)();
      }) as UnitOfWork['transaction'],
      serial,
    };
    return { uow, asked };
  };

  it('execute runs a command with deferWrites and rerunnable: it stops at a failed write, and acts only through its stores', async () => {
    const h = harness();
    const { uow, asked } = noting(h, false);
    await right(execute({ uow })(writeDoc(h, { runs: 0, failNext: null }, TENANT, 1)));
    expect(asked).toEqual([{ deferWrites: true, rerunnable: true }]);
  });

  it('executeIdempotently runs the command with deferWrites and rerunnable, and its own bookkeeping around it (a failure stored) without', async () => {
    const h = harness();
    const { uow, asked } = noting(h, false);
    const probe: Probe = { runs: 0, failNext: invalidState('no') };
    const exec = executeIdempotently({ uow, clock: h.clock, secrets, stores: h.stores });
    await right(exec({ tenant: TENANT, key: 'k', fingerprint: 'fp' }, writeDoc(h, probe, TENANT, 1), render));
    // The claim went through the top-level stores; then the command, then the stored failure.
    expect(asked).toEqual([{ deferWrites: true, rerunnable: true }, undefined]);
    const serial = noting(h, true);
    const together = executeIdempotently({ uow: serial.uow, clock: h.clock, secrets });
    await right(together({ tenant: TENANT, key: 'k2', fingerprint: 'fp' }, writeDoc(h, { runs: 0, failNext: null }, TENANT, 1), render));
    // Claim, command and response in one transaction (transactions one at a time), which a command's rule covers.
    expect(serial.asked).toEqual([{ deferWrites: true, rerunnable: true }]);
    // A replay: the record found, then decided on in a transaction of its own (no claim tried over it).
    serial.asked.length = 0;
    const probe2: Probe = { runs: 0, failNext: null };
    await right(together({ tenant: TENANT, key: 'k2', fingerprint: 'fp' }, writeDoc(h, probe2, TENANT, 1), render));
    expect(serial.asked).toEqual([{ deferWrites: true, rerunnable: true }, undefined]);
    // Expired, the record is replaced in the command's transaction, as if there were none: one transaction, and
    // nothing committed before the command that a crash could leave holding the key.
    h.clock.advance(IDEMPOTENCY_TTL_MS);
    serial.asked.length = 0;
    expect(await right(together({ tenant: TENANT, key: 'k2', fingerprint: 'fp' }, writeDoc(h, probe2, TENANT, 2), render))).toMatchObject({ replayed: false });
    expect(serial.asked).toEqual([{ deferWrites: true, rerunnable: true }]);
    expect(probe2.runs).toBe(1);
    expect(await right(h.stores.idempotency.find(TENANT, 'k2'))).toMatchObject({ state: 'completed', createdAt: h.clock.now().toISOString() });
  });

  it('overridePorts passes a transaction on without deferWrites or rerunnable: a port in another system must not act on a write that has not answered, nor be written twice', async () => {
    const h = harness();
    const { uow, asked } = noting(h, false);
    const joined = overridePorts({ stores: h.stores, uow }, { documentContents: (base) => base.documentContents });
    const command = writeDoc(h, { runs: 0, failNext: null }, TENANT, 1);
    await right(joined.uow.transaction(command, { deferWrites: true, rerunnable: true, lockTimeoutMs: 100 }));
    await right(execute(joined)(command));
    await right(joined.uow.transaction(command));
    expect(asked).toEqual([{ lockTimeoutMs: 100 }, {}, undefined]);
  });
});
