import { MAX_PURGE_BATCH } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, at, fails, makeIdempotencyRecord, ok, tagOf } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

export const idempotencyContract = (h: Harness) =>
  describe('idempotency', () => {
    const response = { status: 201, body: '{"id":"doc_1","name":"ä"}', headers: { 'content-type': 'application/json', location: '/x' } };

    it('insertIfAbsent answers true, then false without overwriting; find round-trips the record', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      expect(await ok(h().stores.idempotency.insertIfAbsent(rec))).toBe(true);
      expect(await ok(h().stores.idempotency.insertIfAbsent({ ...rec, fingerprint: 'other' }))).toBe(false);
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
      expect(await ok(h().stores.idempotency.find(TENANT_A, 'unknown'))).toBeNull();
    });

    it('of concurrent insertIfAbsent calls for one key exactly one wins', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      const results = await Promise.all(Array.from({ length: 6 }, () => ok(h().stores.idempotency.insertIfAbsent(rec))));
      expect(results.filter((x) => x)).toHaveLength(1);
    });

    it('insertNew inserts a record for a new key; on a taken key it fails with ConcurrentModification and changes nothing, answered or deferred', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertNew(rec));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
      const other = { ...rec, fingerprint: 'other', state: 'completed' as const, response };
      expect(await fails(h().stores.idempotency.insertNew(other))).toEqual({ _tag: 'ConcurrentModification', resource: 'idempotency_key', id: rec.key });
      expect(await fails(h().uow.transaction((tx) => tx.idempotency.insertNew(other), { deferWrites: true }))).toEqual({
        _tag: 'ConcurrentModification',
        resource: 'idempotency_key',
        id: rec.key,
      });
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
      // The same key in another org or mode is another key.
      for (const t of STRANGERS) await ok(h().uow.transaction((tx) => tx.idempotency.insertNew({ ...other, tenant: t }), { deferWrites: true }));
      expect(await ok(h().stores.idempotency.find(TENANT_B, rec.key))).toEqual({ ...other, tenant: TENANT_B });
    });

    it('of concurrent insertNew calls for one key in transactions that commit, exactly one succeeds', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      const results = await Promise.all(
        Array.from({ length: 6 }, (_, i) => h().uow.transaction((tx) => tx.idempotency.insertNew({ ...rec, fingerprint: `fp${i}` }), { deferWrites: true })()),
      );
      expect(results.filter((r) => r._tag === 'Right')).toHaveLength(1);
      for (const r of results) if (r._tag === 'Left') expect(tagOf(r.left)).toBe('ConcurrentModification');
    });

    it('keys are scoped to org and mode', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      for (const t of STRANGERS) {
        expect(await ok(h().stores.idempotency.find(t, rec.key))).toBeNull();
        await h().stores.idempotency.complete(t, rec.key, response, rec)();
        await ok(h().stores.idempotency.release(t, rec.key, rec));
        expect(await ok(h().stores.idempotency.insertIfAbsent({ ...rec, tenant: t }))).toBe(true);
      }
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
    });

    it('complete stores the response to replay and keeps the rest', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      await ok(h().stores.idempotency.complete(TENANT_A, rec.key, response, rec));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual({ ...rec, state: 'completed', response });
    });

    it('complete and release act only on the claim they name: not on a record taken over, completed or gone', async () => {
      const claim = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(claim));
      // Another caller took the key over once the claim's lock ran out: a lock of its own, later.
      const takenOver = { ...claim, lockedUntil: at(200) };
      expect(await ok(h().stores.idempotency.replace(takenOver, claim))).toBe(true);
      const others = [{ ...claim, fingerprint: 'other' }, claim];
      for (const stale of others) {
        expect(tagOf(await fails(h().stores.idempotency.complete(TENANT_A, claim.key, response, stale)))).toBe('ConcurrentModification');
        await ok(h().stores.idempotency.release(TENANT_A, claim.key, stale));
        expect(await ok(h().stores.idempotency.find(TENANT_A, claim.key))).toEqual(takenOver);
      }
      // Completed by its holder: neither a second completion nor a release of that claim changes it.
      await ok(h().stores.idempotency.complete(TENANT_A, claim.key, response, takenOver));
      const completed = { ...takenOver, state: 'completed' as const, response };
      expect(tagOf(await fails(h().stores.idempotency.complete(TENANT_A, claim.key, { ...response, status: 500 }, takenOver)))).toBe('ConcurrentModification');
      await ok(h().stores.idempotency.release(TENANT_A, claim.key, takenOver));
      expect(await ok(h().stores.idempotency.find(TENANT_A, claim.key))).toEqual(completed);
      // Gone: completing fails, releasing is nothing to do.
      expect(tagOf(await fails(h().stores.idempotency.complete(TENANT_A, 'never-claimed', response, claim)))).toBe('ConcurrentModification');
      await ok(h().stores.idempotency.release(TENANT_A, 'never-claimed', claim));
    });

    it('keeps the mark of a response stored as sent, through insert, complete and replace', async () => {
      const inClear = { ...response, inClear: true as const };
      const inserted = makeIdempotencyRecord(TENANT_A, { key: 'inserted', state: 'completed', response: inClear });
      await ok(h().stores.idempotency.insertIfAbsent(inserted));
      expect(await ok(h().stores.idempotency.find(TENANT_A, 'inserted'))).toEqual(inserted);
      const completed = makeIdempotencyRecord(TENANT_A, { key: 'completed' });
      await ok(h().stores.idempotency.insertIfAbsent(completed));
      await ok(h().stores.idempotency.complete(TENANT_A, 'completed', inClear, completed));
      expect((await ok(h().stores.idempotency.find(TENANT_A, 'completed')))?.response).toEqual(inClear);
      const replaced = { ...completed, fingerprint: 'new', state: 'completed' as const, response: inClear };
      expect(await ok(h().stores.idempotency.replace(replaced, { ...completed, state: 'completed', response: inClear }))).toBe(true);
      expect(await ok(h().stores.idempotency.find(TENANT_A, 'completed'))).toEqual(replaced);
    });

    it('replace swaps the whole record that is still the one read, and an absent one', async () => {
      const rec = makeIdempotencyRecord(TENANT_A, { state: 'completed', response });
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      const fresh = { ...rec, fingerprint: 'new', state: 'in_progress' as const, response: null, createdAt: at(100), lockedUntil: at(160), expiresAt: at(200) };
      expect(await ok(h().stores.idempotency.replace(fresh, rec))).toBe(true);
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(fresh);
      // Purged meanwhile: the take-over still goes ahead.
      const gone = makeIdempotencyRecord(TENANT_B);
      expect(await ok(h().stores.idempotency.replace({ ...gone, fingerprint: 'new' }, gone))).toBe(true);
      expect(await ok(h().stores.idempotency.find(TENANT_B, gone.key))).toEqual({ ...gone, fingerprint: 'new' });
    });

    it('replace changes nothing and answers false when the record is no longer the one read', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      const next = { ...rec, lockedUntil: at(500), createdAt: at(400) };
      // Each field the caller decided on counts: a record that differs in any of them is another caller's.
      const stale = [
        { ...rec, fingerprint: 'other' },
        { ...rec, state: 'completed' as const, response },
        { ...rec, createdAt: at(1) },
        { ...rec, lockedUntil: at(2) },
        { ...rec, expiresAt: at(3) },
      ];
      for (const previous of stale) expect(await ok(h().stores.idempotency.replace(next, previous))).toBe(false);
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
      // Of two callers that read the same record and replace it, in transactions of their own, exactly one wins.
      const replaced = await Promise.all(
        [at(600), at(700)].map((lockedUntil) => ok(h().uow.transaction((tx) => tx.idempotency.replace({ ...rec, lockedUntil }, rec)))),
      );
      expect(replaced.filter((x) => x)).toHaveLength(1);
      const winner = replaced[0] ? at(600) : at(700);
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual({ ...rec, lockedUntil: winner });
    });

    it('release frees the key', async () => {
      const rec = makeIdempotencyRecord(TENANT_A);
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      await ok(h().stores.idempotency.release(TENANT_A, rec.key, rec));
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toBeNull();
      expect(await ok(h().stores.idempotency.insertIfAbsent(rec))).toBe(true);
    });

    it('purgeExpired deletes records expiring at or before now, in every tenant, and counts them', async () => {
      const early = makeIdempotencyRecord(TENANT_A, { expiresAt: at(10) });
      const boundary = makeIdempotencyRecord(TENANT_B, { expiresAt: at(20) });
      const late = makeIdempotencyRecord(TENANT_A_LIVE, { expiresAt: at(20.001) });
      for (const r of [early, boundary, late]) await ok(h().stores.idempotency.insertIfAbsent(r));
      expect(await ok(h().stores.idempotency.purgeExpired(at(20), 100))).toEqual({ deleted: 2, through: at(20) });
      expect(await ok(h().stores.idempotency.purgeExpired(at(20), 100))).toEqual({ deleted: 0, through: null });
      expect(await ok(h().stores.idempotency.find(TENANT_A, early.key))).toBeNull();
      expect(await ok(h().stores.idempotency.find(TENANT_B, boundary.key))).toBeNull();
      expect(await ok(h().stores.idempotency.find(TENANT_A_LIVE, late.key))).toEqual(late);
    });

    it('purgeExpired deletes at most `limit` records, the earliest to expire first', async () => {
      // Inserted out of order, so that "first" cannot mean "first inserted".
      const records = [5, 1, 4, 2, 3].map((s) => makeIdempotencyRecord(s % 2 === 0 ? TENANT_A : TENANT_B, { expiresAt: at(s) }));
      const live = makeIdempotencyRecord(TENANT_A, { expiresAt: at(60) });
      for (const r of [...records, live]) await ok(h().stores.idempotency.insertIfAbsent(r));
      const left = async () => {
        const found = await Promise.all(records.map(async (r) => ((await ok(h().stores.idempotency.find(r.tenant, r.key))) === null ? null : r.expiresAt)));
        return found.filter((x) => x !== null).sort();
      };
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 2))).toEqual({ deleted: 2, through: at(2) });
      expect(await left()).toEqual([at(3), at(4), at(5)]);
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 2))).toEqual({ deleted: 2, through: at(4) });
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 2))).toEqual({ deleted: 1, through: at(5) });
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 2))).toEqual({ deleted: 0, through: null });
      expect(await left()).toEqual([]);
      expect(await ok(h().stores.idempotency.find(TENANT_A, live.key))).toEqual(live);
    });

    it('purgeExpired from a given expiry on takes nothing earlier, and records sharing that expiry too', async () => {
      const early = makeIdempotencyRecord(TENANT_A, { expiresAt: at(1) });
      const same = [TENANT_A, TENANT_B].map((t) => makeIdempotencyRecord(t, { expiresAt: at(2) }));
      const later = makeIdempotencyRecord(TENANT_B, { expiresAt: at(3) });
      for (const r of [early, ...same, later]) await ok(h().stores.idempotency.insertIfAbsent(r));
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 10, at(2)))).toEqual({ deleted: 3, through: at(3) });
      expect(await ok(h().stores.idempotency.find(early.tenant, early.key))).toEqual(early);
      expect(await ok(h().stores.idempotency.purgeExpired(at(30), 10, null))).toEqual({ deleted: 1, through: at(1) });
      expect(tagOf(await fails(h().stores.idempotency.purgeExpired(at(30), 10, 'yesterday')))).toBe('StoreFailure');
    });

    it('purgeExpired refuses a limit below 1, above MAX_PURGE_BATCH or not whole, and deletes nothing', async () => {
      const rec = makeIdempotencyRecord(TENANT_A, { expiresAt: at(1) });
      await ok(h().stores.idempotency.insertIfAbsent(rec));
      // SQLite would read a negative LIMIT as no limit: the store must not pass it on.
      for (const limit of [0, -1, 1.5, Number.NaN, MAX_PURGE_BATCH + 1]) expect(tagOf(await fails(h().stores.idempotency.purgeExpired(at(30), limit)))).toBe('StoreFailure');
      expect(await ok(h().stores.idempotency.find(TENANT_A, rec.key))).toEqual(rec);
    });
  });

