import * as E from 'fp-ts/lib/Either.js';
import { pipe } from 'fp-ts/lib/function.js';
import * as TE from '@esig/core/task-either';
import type { SignatureRequest, StoreError } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, fails, makeSignatureRequest, ok, tagOf } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

const pause = (ms: number) => () => new Promise<void>((r) => setTimeout(r, ms));

export const signatureRequestsContract = (h: Harness) =>
  describe('signatureRequests', () => {
    it('round-trips the whole aggregate, nested parts and empty variants alike', async () => {
      const full = makeSignatureRequest(TENANT_A);
      const bare = makeSignatureRequest(TENANT_A_LIVE, {
        message: null,
        documentIds: [],
        recipients: [],
        fields: [],
        signingOrder: 'parallel',
        expiresAt: null,
        sentAt: null,
        declinedAt: null,
        certificateId: null,
        finishedSha256: null,
      });
      await ok(h().stores.signatureRequests.insert(full));
      await ok(h().stores.signatureRequests.insert(bare));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, full.id))).toEqual(full);
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A_LIVE, bare.id))).toEqual(bare);
    });

    it('finds nothing for an unknown id, another org or the other mode', async () => {
      const req = makeSignatureRequest(TENANT_A);
      await ok(h().stores.signatureRequests.insert(req));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, 'req_unknown'))).toBeNull();
      for (const t of STRANGERS) expect(await ok(h().stores.signatureRequests.findById(t, req.id))).toBeNull();
    });

    it('update replaces the aggregate when the stored version is next.version - 1', async () => {
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT', version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      const next: SignatureRequest = { ...req, status: 'SENT', title: 'Renamed', recipients: req.recipients.slice(1), version: 2 };
      await ok(h().stores.signatureRequests.update(next));
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(next);
    });

    it('update with a stale or skipped version fails with ConcurrentModification and writes nothing', async () => {
      const req = makeSignatureRequest(TENANT_A, { version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      const v2 = { ...req, title: 'v2', version: 2 };
      await ok(h().stores.signatureRequests.update(v2));
      for (const stale of [{ ...req, title: 'stale', version: 2 }, { ...req, title: 'skip', version: 4 }, { ...req, title: 'same', version: 1 }]) {
        expect(tagOf(await fails(h().stores.signatureRequests.update(stale)))).toBe('ConcurrentModification');
      }
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(v2);
      expect(tagOf(await fails(h().stores.signatureRequests.update({ ...req, id: 'req_unknown', version: 2 })))).toBe('ConcurrentModification');
    });

    it("update cannot reach another org's or mode's request", async () => {
      const req = makeSignatureRequest(TENANT_A, { version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      for (const t of STRANGERS) {
        const hijack = { ...req, orgId: t.orgId, mode: t.mode, title: 'hijacked', version: 2 };
        expect(tagOf(await fails(h().stores.signatureRequests.update(hijack)))).toBe('ConcurrentModification');
        expect(await ok(h().stores.signatureRequests.findById(t, req.id))).toBeNull();
      }
      expect(await ok(h().stores.signatureRequests.findById(TENANT_A, req.id))).toEqual(req);
    });

    it('findByIdForUpdate finds the request of its tenant only, inside and outside a transaction', async () => {
      const req = makeSignatureRequest(TENANT_A);
      await ok(h().stores.signatureRequests.insert(req));
      expect(await ok(h().uow.transaction((tx) => tx.signatureRequests.findByIdForUpdate(TENANT_A, req.id)))).toEqual(req);
      for (const t of STRANGERS) expect(await ok(h().uow.transaction((tx) => tx.signatureRequests.findByIdForUpdate(t, req.id)))).toBeNull();
    });

    it('concurrent transactions that each findByIdForUpdate then update one request all commit, one after another', async () => {
      const req = makeSignatureRequest(TENANT_A, { version: 1, title: 'count:0' });
      await ok(h().stores.signatureRequests.insert(req));
      const N = 4;
      // As a signer signing races the worker recording an invitation: read under the lock, yield so the
      // others ask for the row meanwhile, then write the next version. None may fail its version check.
      const bump = (i: number) =>
        h().uow.transaction((tx) =>
          pipe(
            TE.rightTask(pause(i)),
            TE.chain(() => tx.signatureRequests.findByIdForUpdate(TENANT_A, req.id)),
            TE.chainFirstTaskK(() => pause(15)),
            TE.chainW((cur): TE.TaskEither<StoreError | 'vanished', void> =>
              cur === null ? TE.left('vanished' as const) : tx.signatureRequests.update({ ...cur, title: `count:${Number(cur.title.slice(6)) + 1}`, version: cur.version + 1 }),
            ),
          ),
        )();
      const results = await Promise.all(Array.from({ length: N }, (_, i) => bump(i)));
      expect(results).toEqual(Array.from({ length: N }, () => E.right(undefined)));
      const final = await ok(h().stores.signatureRequests.findById(TENANT_A, req.id));
      expect(final).toMatchObject({ title: `count:${N}`, version: 1 + N });
    });

    it('update moves the request between status filters', async () => {
      const req = makeSignatureRequest(TENANT_A, { status: 'DRAFT', version: 1 });
      await ok(h().stores.signatureRequests.insert(req));
      await ok(h().stores.signatureRequests.update({ ...req, status: 'SENT', version: 2 }));
      const page = (status: SignatureRequest['status']) =>
        ok(h().stores.signatureRequests.list(TENANT_A, { limit: 10, order: 'desc', after: null, filter: { status } }));
      expect((await page('DRAFT')).items).toEqual([]);
      expect((await page('SENT')).items.map((r) => r.id)).toEqual([req.id]);
    });
  });

