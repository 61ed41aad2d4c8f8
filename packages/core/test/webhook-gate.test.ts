import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GateEntry } from '@esig/core';
import { createEndpointGate } from '@esig/core';

const admitted = (e: GateEntry) => {
  if (!e.admitted) throw new Error(`refused, retry in ${e.retryInMs} ms`);
  return e;
};

describe('createEndpointGate', () => {
  it('never holds back an endpoint that answers quickly, however many deliveries it has in flight', () => {
    const gate = createEndpointGate({ share: 2, maxWaitMs: 10_000 });
    const open = Array.from({ length: 50 }, (_, i) => admitted(gate.enter('e', i)));
    open.slice(0, 10).forEach((e) => e.leave(12));
    for (let i = 0; i < 50; i++) admitted(gate.enter('e', 100 + i));
  });

  it('after a slow delivery, lets the endpoint hold only its share, and says when to try again', () => {
    const gate = createEndpointGate({ share: 2, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    const a = admitted(gate.enter('e', 20_000));
    admitted(gate.enter('e', 20_000));
    expect(gate.enter('e', 23_000)).toEqual({ admitted: false, retryInMs: 7_000 });
    // Other endpoints are not affected.
    admitted(gate.enter('other', 23_000));
    // A slot frees: one more may go.
    a.leave(10_000);
    admitted(gate.enter('e', 30_000));
    expect(gate.enter('e', 30_000).admitted).toBe(false);
  });

  it('holds an endpoint back once a delivery still in flight has run slowMs, before any has ended', () => {
    const gate = createEndpointGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0));
    // Within slowMs nothing is known to be slow yet.
    admitted(gate.enter('e', 999));
    expect(gate.enter('e', 1_000)).toEqual({ admitted: false, retryInMs: 1_000 });
  });

  it('lets a recovered endpoint through again once a delivery has ended quickly', () => {
    const gate = createEndpointGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    const first = admitted(gate.enter('e', 20_000));
    expect(gate.enter('e', 20_010).admitted).toBe(false);
    first.leave(30);
    const many = [admitted(gate.enter('e', 20_040)), admitted(gate.enter('e', 20_040)), admitted(gate.enter('e', 20_040))];
    expect(many).toHaveLength(3);
  });

  it('counts a delivery that is left twice once', () => {
    const gate = createEndpointGate({ share: 2, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(5_000);
    const a = admitted(gate.enter('e', 10_000));
    admitted(gate.enter('e', 10_000));
    a.leave(5_000);
    a.leave(5_000);
    admitted(gate.enter('e', 10_001));
    expect(gate.enter('e', 10_001).admitted).toBe(false);
  });

  it('forgets idle endpoints past `remember`, but never one with deliveries in flight', () => {
    const gate = createEndpointGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000, remember: 3 });
    admitted(gate.enter('busy', 0)).leave(10_000);
    admitted(gate.enter('busy', 10_000));
    for (let i = 0; i < 20; i++) admitted(gate.enter(`slow-${i}`, 10_000 + i)).leave(10_000);
    // 'busy' still has a delivery in flight and was slow: it is still held to its share.
    expect(gate.enter('busy', 10_100).admitted).toBe(false);
    // The oldest idle slow endpoints were forgotten (so they start afresh), the newest are remembered.
    admitted(gate.enter('slow-0', 10_100));
    admitted(gate.enter('slow-0', 10_100));
    admitted(gate.enter('slow-19', 10_100));
    expect(gate.enter('slow-19', 10_100).admitted).toBe(false);
  });

  it('property: a slow endpoint never has more than its share in flight, a fast one is never refused, and retries wait within bounds', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('enter' as const), endpoint: fc.constantFrom('a', 'b', 'c'), advance: fc.integer({ min: 0, max: 3_000 }) }),
      fc.record({ kind: fc.constant('leave' as const), pick: fc.nat(), durationMs: fc.oneof(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1_000, max: 10_000 })), advance: fc.integer({ min: 0, max: 3_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 200 }), (share, ops) => {
        const gate = createEndpointGate({ share, slowMs: 1_000, maxWaitMs: 10_000 });
        let now = 0;
        const open: Array<{ endpoint: string; since: number; leave: (ms: number) => void }> = [];
        const last = new Map<string, number>();
        for (const o of ops) {
          now += o.advance;
          if (o.kind === 'leave') {
            if (open.length === 0) continue;
            const [d] = open.splice(o.pick % open.length, 1);
            d!.leave(o.durationMs);
            last.set(d!.endpoint, o.durationMs);
            continue;
          }
          const inFlight = open.filter((d) => d.endpoint === o.endpoint);
          const entry = gate.enter(o.endpoint, now);
          const slow = (last.get(o.endpoint) ?? 0) >= 1_000 || inFlight.some((d) => now - d.since >= 1_000);
          if (entry.admitted) {
            // Admitted past its share only while not known to be slow.
            if (inFlight.length >= share) expect(slow).toBe(false);
            open.push({ endpoint: o.endpoint, since: now, leave: entry.leave });
          } else {
            expect(inFlight.length).toBeGreaterThanOrEqual(share);
            expect(slow).toBe(true);
            expect(entry.retryInMs).toBeGreaterThanOrEqual(1_000);
            expect(entry.retryInMs).toBeLessThanOrEqual(10_000);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
