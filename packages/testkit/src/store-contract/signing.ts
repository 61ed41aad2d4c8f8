import type { EvidenceEntry } from '@esig/core';
import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, at, fails, makeEvidence, makeSigningLink, ok } from '../builders.js';
import type { Harness } from './harness.js';
import { STRANGERS } from './harness.js';

export const signingLinksContract = (h: Harness) =>
  describe('signingLinks', () => {
    it('round-trips a link, with and without expiry, found by its token hash whatever its tenant', async () => {
      const a = makeSigningLink(TENANT_A);
      const b = makeSigningLink(TENANT_B, { expiresAt: null });
      const c = makeSigningLink(TENANT_A_LIVE, { requestId: a.requestId, recipientId: a.recipientId });
      for (const l of [a, b, c]) await ok(h().stores.signingLinks.insert(l));
      for (const l of [a, b, c]) expect(await ok(h().stores.signingLinks.findByTokenHash(l.tokenHash))).toEqual(l);
      expect(await ok(h().stores.signingLinks.findByTokenHash('sha256_of_nothing'))).toBeNull();
    });

    it('refuses a second link with a taken token hash and keeps the first', async () => {
      const first = makeSigningLink(TENANT_A);
      await ok(h().stores.signingLinks.insert(first));
      await fails(h().stores.signingLinks.insert(makeSigningLink(TENANT_B, { tokenHash: first.tokenHash })));
      expect(await ok(h().stores.signingLinks.findByTokenHash(first.tokenHash))).toEqual(first);
    });
  });

const byAtThenId = (a: EvidenceEntry, b: EvidenceEntry) => (a.at === b.at ? (a.id < b.id ? -1 : 1) : a.at < b.at ? -1 : 1);

export const evidenceContract = (h: Harness) =>
  describe('evidence', () => {
    it('round-trips every field, with and without recipient, address, client and details', async () => {
      const full = makeEvidence(TENANT_A, { requestId: 'req_rt', at: at(1) });
      const bare = makeEvidence(TENANT_A, { requestId: 'req_rt', at: at(2), recipientId: null, action: 'completed', ip: null, userAgent: null, details: {} });
      await ok(h().stores.evidence.append(full));
      await ok(h().stores.evidence.append(bare));
      expect(await ok(h().stores.evidence.listForRequest(TENANT_A, 'req_rt'))).toEqual([full, bare]);
    });

    it("lists one request's entries in the order they happened (at, then id), whatever the order of appends", async () => {
      // Ids are made in this order; times differ from it and collide, and appends happen in a third order.
      const times = [3, 1, 3, 2, 1, 3, 0.5];
      const mine = times.map((s, i) => makeEvidence(TENANT_A, { requestId: 'req_1', at: at(s), action: i % 2 === 0 ? 'viewed' : 'signed' }));
      const otherRequest = makeEvidence(TENANT_A, { requestId: 'req_2', at: at(1) });
      for (const i of [5, 2, 0, 6, 3, 1, 4]) await ok(h().stores.evidence.append(mine[i]!));
      await ok(h().stores.evidence.append(otherRequest));
      expect(await ok(h().stores.evidence.listForRequest(TENANT_A, 'req_1'))).toEqual([...mine].sort(byAtThenId));
      expect(await ok(h().stores.evidence.listForRequest(TENANT_A, 'req_2'))).toEqual([otherRequest]);
      expect(await ok(h().stores.evidence.listForRequest(TENANT_A, 'req_unknown'))).toEqual([]);
    });

    it("never lists another org's or mode's entries, even for the same request id", async () => {
      const mine = makeEvidence(TENANT_A, { requestId: 'req_1' });
      await ok(h().stores.evidence.append(mine));
      for (const t of STRANGERS) expect(await ok(h().stores.evidence.listForRequest(t, 'req_1'))).toEqual([]);
      const theirs = STRANGERS.map((t) => makeEvidence(t, { requestId: 'req_1' }));
      for (const e of theirs) await ok(h().stores.evidence.append(e));
      expect(await ok(h().stores.evidence.listForRequest(TENANT_A, 'req_1'))).toEqual([mine]);
      for (const e of theirs) expect(await ok(h().stores.evidence.listForRequest(e, 'req_1'))).toEqual([e]);
    });
  });
