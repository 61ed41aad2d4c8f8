import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GateEntry } from '@esig/core';
import { createReceiverGate } from '@esig/core';

const admitted = (e: GateEntry) => {
  if (!e.admitted) throw new Error(`refused, retry in ${e.retryInMs} ms`);
  return e;
};

describe('createReceiverGate', () => {
  it('never holds back a receiver that answers quickly, however many deliveries it has in flight', () => {
    const gate = createReceiverGate({ share: 2, maxWaitMs: 10_000 });
    const open = Array.from({ length: 50 }, (_, i) => admitted(gate.enter('e', i)));
    open.slice(0, 10).forEach((e) => e.leave(12));
    for (let i = 0; i < 50; i++) admitted(gate.enter('e', 100 + i));
  });

  it('after a slow delivery, lets the receiver hold only its share, and gives each delivery put off a time of its own', () => {
    const gate = createReceiverGate({ share: 2, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    const a = admitted(gate.enter('e', 20_000));
    admitted(gate.enter('e', 20_000));
    // The oldest in flight should end at 30 s: the first just after (a margin of a quarter of slowMs), the next
    // ones a slot apart (10 s over a share of 2, and the margin).
    expect(gate.enter('e', 23_000)).toEqual({ admitted: false, retryInMs: 7_250 });
    expect(gate.enter('e', 23_000)).toEqual({ admitted: false, retryInMs: 12_500 });
    expect(gate.enter('e', 24_000)).toEqual({ admitted: false, retryInMs: 16_750 });
    // Other receivers are not affected.
    admitted(gate.enter('other', 23_000));
    // A slot frees: one more may go.
    a.leave(10_000);
    admitted(gate.enter('e', 30_000));
    expect(gate.enter('e', 30_000).admitted).toBe(false);
  });

  it('puts off no further than the horizon', () => {
    const gate = createReceiverGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000, horizonMs: 60_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    admitted(gate.enter('e', 10_000));
    const waits = Array.from({ length: 20 }, () => gate.enter('e', 10_000)).map((g) => (g.admitted ? -1 : g.retryInMs));
    expect(waits.slice(0, 5)).toEqual([10_250, 20_500, 30_750, 41_000, 51_250]);
    expect(waits.slice(5).every((w) => w === 60_000)).toBe(true);
  });

  it('forgets a slow verdict after forgetMs without another delivery ending', () => {
    const gate = createReceiverGate({ share: 4, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    // Within a minute of that timeout, a burst is held to the share.
    expect(Array.from({ length: 16 }, () => gate.enter('e', 60_000)).filter((g) => !g.admitted)).toHaveLength(12);
    // A day later it is not.
    const gate2 = createReceiverGate({ share: 4, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate2.enter('e', 0)).leave(10_000);
    expect(Array.from({ length: 16 }, () => gate2.enter('e', 86_400_000)).filter((g) => !g.admitted)).toEqual([]);
  });

  it('does not hold back a busy receiver whose deliveries answer in 20 ms while one request is stuck', () => {
    const gate = createReceiverGate({ share: 4, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0));
    let refused = 0;
    // 2 s of a busy receiver: every 5 ms, eight deliveries start and those that started 20 ms before end.
    const open: Array<{ at: number; leave: (ms: number) => void }> = [];
    for (let t = 5; t <= 2_000; t += 5) {
      while (open.length > 0 && open[0]!.at + 20 <= t) open.shift()!.leave(20);
      for (let i = 0; i < 8; i++) {
        const g = gate.enter('e', t);
        if (g.admitted) open.push({ at: t, leave: g.leave });
        else refused += 1;
      }
    }
    expect(refused).toBe(0);
  });

  it('drains a backlog to a receiver that never answers with about one put-off per delivery, not one per round', () => {
    // Share 1 and the 10 s timeout, as a worker of 4 loops sees it; a delivery put off comes back at its time.
    const simulate = (n: number) => {
      const gate = createReceiverGate({ share: 1, maxWaitMs: 10_000 });
      admitted(gate.enter('slow', -10_000)).leave(10_000);
      const events: Array<{ at: number; leave?: (ms: number) => void }> = Array.from({ length: n }, () => ({ at: 0 }));
      let putOffs = 0;
      while (events.length > 0) {
        events.sort((a, b) => a.at - b.at);
        const ev = events.shift()!;
        if (ev.leave !== undefined) {
          ev.leave(10_000);
          continue;
        }
        const g = gate.enter('slow', ev.at);
        if (g.admitted) events.push({ at: ev.at + 10_000, leave: g.leave });
        else {
          putOffs += 1;
          events.push({ at: ev.at + g.retryInMs });
        }
      }
      return putOffs / n;
    };
    const small = simulate(100);
    const large = simulate(400);
    expect(small).toBeLessThanOrEqual(1);
    // 400 slots of 10 s reach past the 1 h horizon: the last few are put off once more.
    expect(large).toBeLessThan(1.5);
  });

  it('holds a receiver back once its share of deliveries in flight have run slowMs, before any has ended', () => {
    const gate = createReceiverGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0));
    // Within slowMs nothing is known to be slow yet.
    admitted(gate.enter('e', 999));
    expect(gate.enter('e', 1_000)).toEqual({ admitted: false, retryInMs: 1_250 });
  });

  it('lets a recovered receiver through again once a delivery has ended quickly', () => {
    const gate = createReceiverGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(10_000);
    const first = admitted(gate.enter('e', 20_000));
    expect(gate.enter('e', 20_010).admitted).toBe(false);
    first.leave(30);
    const many = [admitted(gate.enter('e', 20_040)), admitted(gate.enter('e', 20_040)), admitted(gate.enter('e', 20_040))];
    expect(many).toHaveLength(3);
  });

  it('counts a delivery that is left twice once', () => {
    const gate = createReceiverGate({ share: 2, slowMs: 1_000, maxWaitMs: 10_000 });
    admitted(gate.enter('e', 0)).leave(5_000);
    const a = admitted(gate.enter('e', 10_000));
    admitted(gate.enter('e', 10_000));
    a.leave(5_000);
    a.leave(5_000);
    admitted(gate.enter('e', 10_001));
    expect(gate.enter('e', 10_001).admitted).toBe(false);
  });

  it('forgets idle receivers past `remember`, but never one with deliveries in flight', () => {
    const gate = createReceiverGate({ share: 1, slowMs: 1_000, maxWaitMs: 10_000, remember: 3 });
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

  it('property: refused exactly when the receiver holds its share and is slow; put-off times within bounds and one after another', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('enter' as const), receiver: fc.constantFrom('a', 'b', 'c'), advance: fc.integer({ min: 0, max: 3_000 }) }),
      fc.record({ kind: fc.constant('leave' as const), pick: fc.nat(), durationMs: fc.oneof(fc.integer({ min: 0, max: 999 }), fc.integer({ min: 1_000, max: 10_000 })), advance: fc.integer({ min: 0, max: 3_000 }) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 4 }), fc.array(op, { maxLength: 200 }), (share, ops) => {
        const gate = createReceiverGate({ share, slowMs: 1_000, maxWaitMs: 10_000 });
        let now = 0;
        const open: Array<{ receiver: string; since: number; leave: (ms: number) => void }> = [];
        /** Per receiver: the last delivery that ended, how long it took and when it ended. */
        const last = new Map<string, { ms: number; end: number }>();
        const lastPutOff = new Map<string, number>();
        for (const o of ops) {
          now += o.advance;
          if (o.kind === 'leave') {
            if (open.length === 0) continue;
            const [d] = open.splice(o.pick % open.length, 1);
            d!.leave(o.durationMs);
            last.set(d!.receiver, { ms: o.durationMs, end: d!.since + o.durationMs });
            continue;
          }
          const inFlight = open.filter((d) => d.receiver === o.receiver);
          const l = last.get(o.receiver);
          const slow = (l !== undefined && l.ms >= 1_000 && now - l.end <= 60_000) || inFlight.filter((d) => now - d.since >= 1_000).length >= share;
          const entry = gate.enter(o.receiver, now);
          expect(entry.admitted).toBe(!(inFlight.length >= share && slow));
          if (entry.admitted) open.push({ receiver: o.receiver, since: now, leave: entry.leave });
          else {
            expect(entry.retryInMs).toBeGreaterThanOrEqual(1_000);
            expect(entry.retryInMs).toBeLessThanOrEqual(3_600_000);
            // Each put-off time comes after the one before for that receiver (until the horizon caps them).
            const at = now + entry.retryInMs;
            if (at < now + 3_600_000) expect(at).toBeGreaterThan(lastPutOff.get(o.receiver) ?? -Infinity);
            lastPutOff.set(o.receiver, at);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
