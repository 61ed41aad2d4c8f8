import { describe, expect, it } from 'vitest';
import { TENANT_A, TENANT_A_LIVE, TENANT_B, at, fails, makeEmbedSession, ok } from '../builders.js';
import type { Harness } from './harness.js';

export const embedSessionsContract = (h: Harness) =>
  describe('embedSessions', () => {
    it('round-trips a session, found by its token hash whatever its tenant', async () => {
      const a = makeEmbedSession(TENANT_A);
      const b = makeEmbedSession(TENANT_B, { origin: 'http://127.0.0.1:5173', usedAt: at(10) });
      const c = makeEmbedSession(TENANT_A_LIVE, { requestId: a.requestId, recipientId: a.recipientId });
      for (const s of [a, b, c]) await ok(h().stores.embedSessions.insert(s));
      for (const s of [a, b, c]) expect(await ok(h().stores.embedSessions.findByTokenHash(s.tokenHash))).toEqual(s);
      expect(await ok(h().stores.embedSessions.findByTokenHash('sha256_of_nothing'))).toBeNull();
    });

    it('refuses a second session with a taken token hash or id and keeps the first', async () => {
      const first = makeEmbedSession(TENANT_A);
      await ok(h().stores.embedSessions.insert(first));
      await fails(h().stores.embedSessions.insert(makeEmbedSession(TENANT_B, { tokenHash: first.tokenHash })));
      await fails(h().stores.embedSessions.insert(makeEmbedSession(TENANT_A, { id: first.id })));
      expect(await ok(h().stores.embedSessions.findByTokenHash(first.tokenHash))).toEqual(first);
    });

    it('consumes an unused session once, before its expiry only', async () => {
      const s = makeEmbedSession(TENANT_A, { expiresAt: at(300) });
      await ok(h().stores.embedSessions.insert(s));
      expect(await ok(h().stores.embedSessions.consume(s.tokenHash, at(100)))).toBe(true);
      expect(await ok(h().stores.embedSessions.consume(s.tokenHash, at(101)))).toBe(false);
      expect(await ok(h().stores.embedSessions.findByTokenHash(s.tokenHash))).toEqual({ ...s, usedAt: at(100) });

      const late = makeEmbedSession(TENANT_A, { expiresAt: at(300) });
      await ok(h().stores.embedSessions.insert(late));
      expect(await ok(h().stores.embedSessions.consume(late.tokenHash, at(300)))).toBe(false);
      expect((await ok(h().stores.embedSessions.findByTokenHash(late.tokenHash)))?.usedAt).toBeNull();
      expect(await ok(h().stores.embedSessions.consume('sha256_of_nothing', at(1)))).toBe(false);
    });

    it('lets exactly one of concurrent consumers win', async () => {
      const s = makeEmbedSession(TENANT_A);
      await ok(h().stores.embedSessions.insert(s));
      const wins = await Promise.all(
        Array.from({ length: 5 }, (_, i) => ok(h().uow.transaction((tx) => tx.embedSessions.consume(s.tokenHash, at(1 + i))))),
      );
      expect(wins.filter(Boolean)).toHaveLength(1);
    });
  });
