import { DELIVERY_TIMEOUT_MS } from './webhook-rules.js';

/**
 * How many of a worker's deliveries one slow receiver may hold at once.
 *
 * A worker's webhook loops take jobs in the order they fell due. Without a limit, a backlog for a receiver that
 * does not answer takes every loop for the whole delivery timeout, again and again: measured with 16 loops, 48
 * deliveries to a receiver that never answered held another org's deliveries back for 30 s, three rounds of
 * 10 s. With this gate, a slow receiver holds at most `share` of the loops; its other deliveries are put off
 * (see `handleWebhookDeliver`), each to a time of its own, and the loops go on to other work.
 *
 * A receiver is named by its URL (`enter`'s key), so several endpoints pointing at one URL share one share.
 * It is slow, on what this process has seen, when the last delivery to it that ended took `slowMs` or more
 * (a verdict forgotten after `forgetMs` without another), or when `share` of its deliveries in flight have
 * each run that long already. One stuck request does not make a busy receiver that otherwise answers quickly
 * slow. The gate is per process (each worker process holds its own share) and in memory.
 *
 * Put-off deliveries get times one after another, a slot apart (the last duration over the share, and a
 * quarter of `slowMs`: about when the next slot frees), so that a backlog is put off about once per delivery
 * rather than again at every round. No time is further than `horizonMs` ahead: if the receiver recovers, its
 * backlog does not wait hours for slots planned while it was slow. (A backlog longer than the horizon is put
 * off again when its time comes.)
 */

/** The gate's answer to a delivery about to start. */
export type GateEntry =
  /** Go ahead; call `leave` with how long the exchange took, once it has ended (a second call is ignored). */
  | { readonly admitted: true; readonly leave: (durationMs: number) => void }
  /** The receiver is slow and holds its share: try again in `retryInMs`. */
  | { readonly admitted: false; readonly retryInMs: number };

export interface ReceiverGate {
  /** A delivery to `receiver` (its URL) about to start at `nowMs`. */
  readonly enter: (receiver: string, nowMs: number) => GateEntry;
}

export interface ReceiverGateOptions {
  /** Deliveries a slow receiver may have in flight at once. At least 1. */
  readonly share: number;
  /** A delivery that takes this long or longer makes its receiver slow. Default 1 s. */
  readonly slowMs?: number;
  /** No delivery takes longer, so a slot has surely freed by then. Default: the delivery timeout, 10 s. */
  readonly maxWaitMs?: number;
  /** How long a slow verdict holds without another delivery ending. Default 6 × maxWaitMs. */
  readonly forgetMs?: number;
  /** The furthest ahead a delivery is put off. Default 1 h. */
  readonly horizonMs?: number;
  /** Receivers remembered at most; the least recently used without deliveries in flight are forgotten first. */
  readonly remember?: number;
}

interface Lane {
  /** When each delivery in flight started, oldest first. */
  readonly starts: number[];
  /** How long the last delivery that ended took, and when it ended. */
  lastMs: number;
  lastAt: number;
  /** The time the next put-off delivery gets, at the earliest. */
  nextSlot: number;
}

export const createReceiverGate = (o: ReceiverGateOptions): ReceiverGate => {
  const share = Math.max(1, Math.floor(o.share));
  const slowMs = o.slowMs ?? 1_000;
  const maxWaitMs = o.maxWaitMs ?? DELIVERY_TIMEOUT_MS;
  const forgetMs = o.forgetMs ?? 6 * maxWaitMs;
  const horizonMs = o.horizonMs ?? 3_600_000;
  const remember = o.remember ?? 10_000;
  const lanes = new Map<string, Lane>();

  const forgetIdle = () => {
    for (const [key, lane] of lanes) {
      if (lanes.size <= remember) return;
      if (lane.starts.length === 0) lanes.delete(key);
    }
  };
  /** How long deliveries to this receiver take, as far as is known now; 0 when it is not slow. */
  const slowFor = (lane: Lane, nowMs: number): number => {
    if (lane.lastMs >= slowMs && nowMs - lane.lastAt <= forgetMs) return lane.lastMs;
    const stuck = lane.starts.filter((s) => nowMs - s >= slowMs).length;
    return stuck >= share ? slowMs : 0;
  };

  return {
    enter: (receiver, nowMs) => {
      const lane = lanes.get(receiver) ?? { starts: [], lastMs: 0, lastAt: 0, nextSlot: 0 };
      const took = lane.starts.length >= share ? slowFor(lane, nowMs) : 0;
      if (took > 0) {
        const expected = Math.min(maxWaitMs, took);
        // The oldest delivery in flight should end first; the first put-off delivery goes just after, and each
        // next one a slot later. The margin keeps a delivery from coming due the very moment the one before it
        // should end: claimed a little early, it would only be put off again, to the end of the line.
        const margin = slowMs / 4;
        const firstFree = nowMs + Math.max(slowMs, expected - (nowMs - lane.starts[0]!)) + margin;
        const at = Math.min(Math.max(firstFree, lane.nextSlot), nowMs + horizonMs);
        lane.nextSlot = at + expected / share + margin;
        return { admitted: false, retryInMs: at - nowMs };
      }
      // Most recently used last, so that forgetIdle drops the least recently used first.
      lanes.delete(receiver);
      lanes.set(receiver, lane);
      lane.starts.push(nowMs);
      if (lanes.size > remember) forgetIdle();
      let ended = false;
      return {
        admitted: true,
        leave: (durationMs) => {
          if (ended) return;
          ended = true;
          lane.starts.splice(lane.starts.indexOf(nowMs), 1);
          lane.lastMs = durationMs;
          lane.lastAt = nowMs + durationMs;
          // An idle receiver that answered quickly has nothing worth remembering.
          if (lane.starts.length === 0 && durationMs < slowMs && lanes.get(receiver) === lane) lanes.delete(receiver);
        },
      };
    },
  };
};
