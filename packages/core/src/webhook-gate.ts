/**
 * How many of a worker's deliveries one slow endpoint may hold at once.
 *
 * A worker's webhook loops take jobs in the order they fell due. Without a limit, a backlog for one endpoint
 * that does not answer takes every loop for the whole delivery timeout, again and again: measured with 16
 * loops, 48 deliveries to a receiver that never answered held another org's deliveries back for 30 s, three
 * rounds of 10 s. With this gate, an endpoint that is slow holds at most `share` of the loops; its other
 * deliveries are put off (see `handleWebhookDeliver`) and the loops go on to other endpoints' work.
 *
 * "Slow" is judged on what this process has seen: the last delivery to the endpoint took `slowMs` or more, or
 * one still in flight has run that long. An endpoint that answers quickly is never held back, however many
 * deliveries it has in flight, so a single busy receiver still gets every loop. The gate is per process
 * (each worker process holds its own share), in memory, and forgets endpoints that are idle and fast.
 */

/** The gate's answer to a delivery about to start. */
export type GateEntry =
  /** Go ahead; call `leave` with how long the exchange took, once it has ended (a second call is ignored). */
  | { readonly admitted: true; readonly leave: (durationMs: number) => void }
  /** The endpoint is slow and holds its share: try again in about `retryInMs`. */
  | { readonly admitted: false; readonly retryInMs: number };

export interface EndpointGate {
  /** A delivery to `endpoint` (any key naming it: org, mode and endpoint id) about to start at `nowMs`. */
  readonly enter: (endpoint: string, nowMs: number) => GateEntry;
}

export interface EndpointGateOptions {
  /** Deliveries a slow endpoint may have in flight at once. At least 1. */
  readonly share: number;
  /** A delivery that takes this long or longer makes its endpoint slow. Default 1 s. */
  readonly slowMs?: number;
  /** The longest a put-off delivery waits: the delivery timeout, after which a slot has surely freed. */
  readonly maxWaitMs: number;
  /** Endpoints remembered at most; the least recently used without deliveries in flight are forgotten first. */
  readonly remember?: number;
}

interface Lane {
  /** When each delivery in flight started, oldest first. */
  readonly starts: number[];
  /** How long the last delivery that ended took. */
  lastMs: number;
}

export const createEndpointGate = (o: EndpointGateOptions): EndpointGate => {
  const share = Math.max(1, Math.floor(o.share));
  const slowMs = o.slowMs ?? 1_000;
  const remember = o.remember ?? 10_000;
  const lanes = new Map<string, Lane>();

  const forgetIdle = () => {
    for (const [key, lane] of lanes) {
      if (lanes.size <= remember) return;
      if (lane.starts.length === 0) lanes.delete(key);
    }
  };

  return {
    enter: (endpoint, nowMs) => {
      const lane = lanes.get(endpoint) ?? { starts: [], lastMs: 0 };
      const oldest = lane.starts[0];
      const runningFor = oldest === undefined ? 0 : nowMs - oldest;
      if (lane.starts.length >= share && (lane.lastMs >= slowMs || runningFor >= slowMs))
        return { admitted: false, retryInMs: Math.min(o.maxWaitMs, Math.max(slowMs, lane.lastMs - runningFor)) };
      // Most recently used last, so that forgetIdle drops the least recently used first.
      lanes.delete(endpoint);
      lanes.set(endpoint, lane);
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
          // An idle endpoint that answered quickly has nothing worth remembering.
          if (lane.starts.length === 0 && durationMs < slowMs && lanes.get(endpoint) === lane) lanes.delete(endpoint);
        },
      };
    },
  };
};
