import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { Socket, isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { WebhookRequest, WebhookResponse, WebhookSender, WebhookTransportError } from '@esig/core';
import { Client, buildConnector } from 'undici';
import { type AllowList, checkAddressWith, compileAllowList, normaliseHostName } from './address-rules.js';
import { reusedResolutions } from './resolutions.js';
import { parseRetryAfter } from './retry-after.js';
import { parseTarget } from './target.js';
import { classifyTransportError, describeError } from './transport-errors.js';

export interface HttpsWebhookSenderOptions {
  /**
   * Host names or address ranges exempt from the address rules (`ESIG_WEBHOOK_ALLOW_HOSTS`), e.g.
   * `['127.0.0.1/32', 'localhost']`. Development only. A listed host name exempts every address it
   * resolves to; a range exempts the addresses inside it, whatever the name.
   */
  readonly allowHosts?: readonly string[];
  /** PEM certificates trusted in addition to Node's bundled roots (`ESIG_WEBHOOK_CA_FILE`). */
  readonly extraCa?: string | Buffer;
  /** Host name → addresses. Default: the system resolver (`dns.lookup`, all addresses). */
  readonly resolve?: (host: string) => Promise<readonly string[]>;
  /**
   * How long a host name's resolution is reused (default 1,000 ms; 0 resolves for every request). The
   * addresses are still checked for every request; a failed resolution is never reused. Requests to one
   * name that arrive while it is being resolved wait for that one resolution.
   */
  readonly resolutionCacheMs?: number;
  /** A monotonic clock in ms, for the age of a reused resolution; default `performance.now`. */
  readonly monotonicNow?: () => number;
  readonly userAgent?: string;
  /** Wall clock in ms, for an HTTP-date `Retry-After`; default `Date.now`. */
  readonly now?: () => number;
  /**
   * Keep connections open between deliveries to the same endpoint (default true). A connection is reused
   * only for a delivery whose fresh resolution and check gave exactly the addresses it was opened for
   * (see `createHttpsWebhookSender`); false opens a new connection for every delivery.
   */
  readonly keepAlive?: boolean;
  /**
   * How long an idle connection is kept (default 4 s, under the 5 s idle timeout of Node's own HTTP
   * server, so the receiver rarely closes one just as it is reused). A receiver's `Keep-Alive: timeout=`
   * hint shortens it.
   */
  readonly idleSocketMs?: number;
  /**
   * Where the cause of a refusal goes when the reason a caller reads leaves it out (the server's log, as a
   * warning): what the resolver failed with, or the address a name resolved to. Default: nowhere.
   */
  readonly log?: (fields: Readonly<Record<string, unknown>>, msg: string) => void;
}

export const DEFAULT_USER_AGENT = 'esig-webhooks/1.0 (+https://github.com/esig)';

/** The delivery log keeps this many bytes of a response body (CONTRACT). */
export const BODY_EXCERPT_BYTES = 1024;

/** Headers this sender writes itself; a caller's value for one of them is dropped. */
const OWN_HEADERS = new Set(['host', 'content-type', 'content-length', 'user-agent', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade', 'expect', 'te']);

const defaultResolve = async (host: string): Promise<readonly string[]> =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

type Checked =
  | { readonly ok: true; readonly host: string; readonly port: number; readonly path: string; readonly literal: boolean; readonly addresses: readonly string[] }
  | {
      readonly ok: false;
      readonly error: 'refused_target' | 'dns';
      /**
       * What may be shown to whoever gave the URL: what is wrong with the URL, but nothing of this server's
       * view of the network (the resolver's error, the address a name resolved to), which they could not
       * learn from outside and could otherwise probe — an internal name's address, the resolver's health.
       */
      readonly reason: string;
      /** The whole story, for the server's log. */
      readonly detail: string;
    };

/**
 * Node's `lookup` hook, answering every query with the addresses already checked: the connection can go
 * nowhere else, and no second resolution happens between the check and the connect (DNS rebinding).
 */
export const pinnedLookup = (addresses: readonly string[]): LookupFunction => {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const first = entries[0] as { address: string; family: number };
    if (options.all === true) (callback as (e: null, a: typeof entries) => void)(null, entries);
    else callback(null, first.address, first.family);
  };
};

export type { Checked };

/**
 * The outbound-request rules as one check: parses the URL (https only, no credentials), resolves the host
 * once and checks every address. Shared by the webhook sender and the client-metadata fetcher.
 */
export const makeTargetCheck = (
  opts: Pick<HttpsWebhookSenderOptions, 'allowHosts' | 'resolve' | 'resolutionCacheMs' | 'monotonicNow'>,
): ((url: string) => Promise<Checked>) => {
  const allow: AllowList = compileAllowList(opts.allowHosts ?? []);
  const resolve = reusedResolutions(opts.resolve ?? defaultResolve, opts.resolutionCacheMs ?? 1_000, opts.monotonicNow ?? (() => performance.now()));
  const check = async (url: string): Promise<Checked> => {
    const target = parseTarget(url);
    if (!target.ok) return { ok: false, error: 'refused_target', reason: target.reason, detail: target.reason };
    const { host, literal } = target;
    let addresses: readonly string[];
    if (literal) addresses = [host];
    else {
      // One text however the resolution failed: NXDOMAIN and a resolver timing out differ only on our side.
      const unresolved = `${host} did not resolve to any address`;
      try {
        addresses = await resolve(host);
      } catch (e) {
        return { ok: false, error: 'dns', reason: unresolved, detail: `${host}: ${describeError(e)}` };
      }
      if (addresses.length === 0) return { ok: false, error: 'dns', reason: unresolved, detail: `${host}: no addresses` };
    }
    if (!literal && allow.names.has(normaliseHostName(host))) return { ...target, addresses };
    // Every address must pass, not just the one a connection would pick first.
    for (const address of addresses) {
      const verdict = checkAddressWith(address, allow);
      if (!verdict.ok)
        return literal
          ? { ok: false, error: 'refused_target', reason: verdict.reason, detail: verdict.reason }
          : { ok: false, error: 'refused_target', reason: `${host} resolves to a private or reserved address`, detail: `${host} resolves to ${verdict.reason}` };
    }
    return { ...target, addresses };
  };
  return check;
};

const decoder = new TextDecoder('utf-8', { fatal: false });

/**
 * A send's one timer, and what its end interrupts: the resolution, then the exchange. A plain field rather
 * than an AbortSignal: an EventTarget's listeners cost a measurable share of a kept-alive POST.
 */
interface Deadline {
  expired: boolean;
  onExpire: (() => void) | null;
}

/** Pools kept at most before idle ones are dropped (one per endpoint and address set in use). */
const MAX_IDLE_POOLS = 64;

/** Idle connections a pool keeps at most; past it, a connection whose delivery ends is closed. */
const MAX_IDLE_PER_POOL = 32;

/** A header name as the receiver's answer carries it (bytes, read as latin1 like Node's parser). */
const RETRY_AFTER = 'retry-after';

/** The first `Retry-After` among undici's raw response headers (name, value, name, value …), as Node keeps it. */
const retryAfterOf = (raw: ReadonlyArray<Buffer | string>): string | undefined => {
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === RETRY_AFTER.length && name.toString('latin1').toLowerCase() === RETRY_AFTER) return raw[i + 1]!.toString('latin1');
  }
  return undefined;
};

/** What undici calls a request it refused to build (a header value with a line break, say): nothing was sent. */
const NOT_SENT = new Set(['UND_ERR_INVALID_ARG', 'UND_ERR_NOT_SUPPORTED']);

/**
 * One connection at a time: an undici `Client` (it opens the connection again when one closes while idle), and
 * the socket it is opening or has open, so that a deadline can end a connect still under way.
 */
interface Lane {
  client: Client;
  socket: Socket | null;
  readonly pool: LanePool;
}

/**
 * The connections of one (port, host name, checked address set): those free, how many are in use, and the
 * connector that opens them, pinned to that address set.
 */
interface LanePool {
  readonly idle: Lane[];
  busy: number;
  readonly connect: buildConnector.connector;
}

const noop = () => undefined;

/**
 * A `WebhookSender` over HTTPS (undici's HTTP/1.1 client). Each `send` parses the URL, resolves the host once,
 * checks every address, and connects only to those addresses (the host name still drives SNI, certificate
 * checking and the Host header). Certificates are always verified; redirects are never followed; the whole
 * exchange, resolution and connect included, must finish within `timeoutMs`.
 *
 * Connections are kept alive and reused, without weakening that: each `send` still resolves and checks first,
 * and then takes a connection from the pool of exactly (port, host name, the set of addresses just checked).
 * Every connection of that pool was opened through the same pinned lookup, so it leads to one of those
 * addresses, all of which passed the check of this very delivery. When the name resolves differently (DNS
 * rebinding to a private address, say), the new set is checked and refused before any pool is asked, or, if it
 * passes, lands in another pool: a connection to an old address is never reused for a new answer.
 *
 * A delivery has its connection to itself until it ends. One that ends without a complete answer (its deadline,
 * a transport error, an answer cut at the excerpt's length) closes it, a connect under way included, and it is
 * never used again: undici's own pool would open a new connection for a request it gave up. undici reads
 * whatever the receiver sent unasked on an idle connection before it writes the next request there.
 *
 * Why undici and not `node:https`: a kept-alive POST through undici's `dispatch` cost 36 µs of CPU on this
 * project's machine against 81–88 µs through an `https.Agent` (20,000 POSTs, 16 at a time, to one receiver),
 * and a webhook worker's rate is bounded by its CPU per delivery (`npm run bench:sender`). One difference:
 * undici fails an answer that starts with an unasked `100 Continue` (it skips the other 1xx), which Node's
 * client skipped like any 1xx; such a delivery fails as `connect`.
 */
export const createHttpsWebhookSender = (opts: HttpsWebhookSenderOptions = {}): WebhookSender => {
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const now = opts.now ?? Date.now;
  // Built once: a TLS context made from every root certificate costs tens of milliseconds, far more than
  // the handshake itself, so making one per request would cap a worker at a few dozen deliveries a second.
  const secureContext =
    opts.extraCa === undefined
      ? undefined
      : createSecureContext({ ca: [...rootCertificates, typeof opts.extraCa === 'string' ? opts.extraCa : opts.extraCa.toString('utf8')] });

  const keepAlive = opts.keepAlive ?? true;
  const idleSocketMs = opts.idleSocketMs ?? 4_000;
  if (!Number.isFinite(idleSocketMs) || idleSocketMs < 1) throw new RangeError(`idleSocketMs must be a number of milliseconds of at least 1, got ${idleSocketMs}`);
  const pools = new Map<string, LanePool>();

  /** A free connection of exactly `target`'s checked addresses, or a new one; counted as in use. */
  const take = (target: Extract<Checked, { ok: true }>): Lane => {
    const key = `${target.port}|${target.host}|${[...target.addresses].sort().join(',')}`;
    let pool = pools.get(key);
    if (pool === undefined) {
      if (pools.size >= MAX_IDLE_POOLS)
        for (const [k, p] of pools)
          if (p.busy === 0) {
            for (const lane of p.idle) lane.client.close().catch(noop);
            pools.delete(k);
          }
      pool = {
        idle: [],
        busy: 0,
        connect: buildConnector({
          // Every connection of this pool goes to an address of this set, whatever the name resolves to later.
          lookup: pinnedLookup(target.addresses),
          rejectUnauthorized: true,
          // No deadline of its own: the delivery's ends the connect (see `give`), however long `timeoutMs` is.
          timeout: 0,
          ...(secureContext === undefined ? {} : { secureContext }),
        }),
      };
      pools.set(key, pool);
    }
    pool.busy += 1;
    for (let lane = pool.idle.pop(); lane !== undefined; lane = pool.idle.pop()) if (!lane.client.destroyed && !lane.client.closed) return lane;
    const open = pool.connect;
    const lane: Lane = { client: undefined as unknown as Client, socket: null, pool };
    lane.client = new Client(`https://${target.literal && target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`, {
      connect: (options, callback) => {
        // undici's connector returns the socket it opens (its typings say nothing); the test of a handshake that
        // never completes fails if that ever changes.
        const socket: unknown = open(options, callback);
        if (!(socket instanceof Socket)) return;
        lane.socket = socket;
        // An idle connection that closes (its idle time out, or the receiver's) takes its lane with it: a pool
        // keeps no clients without a connection.
        socket.once('close', () => {
          if (lane.socket !== socket) return;
          lane.socket = null;
          const at = lane.pool.idle.indexOf(lane);
          if (at < 0) return;
          lane.pool.idle.splice(at, 1);
          lane.client.close().catch(noop);
        });
      },
      // The send's own deadline bounds the exchange; undici's would only race it.
      headersTimeout: 0,
      bodyTimeout: 0,
      // An idle connection closes after this, sooner when the receiver's `Keep-Alive: timeout=` says so: a second
      // under its timeout, so that it rarely closes one just as it is reused.
      keepAliveTimeout: idleSocketMs,
      keepAliveMaxTimeout: idleSocketMs,
      keepAliveTimeoutThreshold: 1_000,
    });
    return lane;
  };
  /** A delivery is done with its connection: kept for the next one after a complete answer, else closed for good. */
  const give = (lane: Lane, reusable: boolean) => {
    const { pool } = lane;
    pool.busy -= 1;
    if (reusable && keepAlive && lane.socket !== null && pool.idle.length < MAX_IDLE_PER_POOL) pool.idle.push(lane);
    else if (reusable) lane.client.close().catch(noop);
    else {
      // A connect under way included: undici would otherwise finish it (and keep the process alive) for no one.
      lane.socket?.destroy();
      lane.client.destroy().catch(noop);
    }
  };

  const check = makeTargetCheck(opts);

  const exchange = (target: Extract<Checked, { ok: true }>, request: WebhookRequest, deadline: Deadline, elapsed: () => number): Promise<WebhookResponse> =>
    new Promise((settle) => {
      if (deadline.expired) {
        settle({ _tag: 'NoAnswer', error: 'timeout', detail: `no complete answer within ${request.timeoutMs} ms`, durationMs: elapsed() });
        return;
      }
      const lane = take(target);
      let done = false;
      /** Settles once; the connection goes back to the pool only after a complete answer. */
      const finish = (r: WebhookResponse, complete: boolean) => {
        if (done) return;
        done = true;
        deadline.onExpire = null;
        give(lane, complete);
        settle(r);
      };
      const noAnswer = (error: WebhookTransportError, detail: string) => finish({ _tag: 'NoAnswer', error, detail, durationMs: elapsed() }, false);
      deadline.onExpire = () => noAnswer('timeout', `no complete answer within ${request.timeoutMs} ms`);

      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (!OWN_HEADERS.has(name.toLowerCase())) headers[name] = value;
      headers['content-type'] = 'application/json';
      headers['user-agent'] = userAgent;

      let status = 0;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let kept = 0;
      const answered = (complete: boolean) =>
        finish(
          {
            _tag: 'Answered',
            status,
            bodyExcerpt: decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
            retryAfterS: parseRetryAfter(retryAfter, now()),
            durationMs: elapsed(),
          },
          complete,
        );
      // undici writes the headers as latin1 and the body (a string) as UTF-8, and sets Content-Length itself.
      // `reset` sends `Connection: close`: one connection per delivery when keepAlive is off.
      lane.client.dispatch(
        { method: 'POST', path: target.path, headers, body: request.body, ...(keepAlive ? {} : { reset: true }) },
        {
          onConnect: noop,
          onHeaders: (statusCode: number, raw: Buffer[]) => {
            if (done) return false;
            status = statusCode;
            retryAfter = retryAfterOf(raw);
            return true;
          },
          onData: (chunk: Buffer) => {
            if (done) return false;
            const take = chunk.subarray(0, BODY_EXCERPT_BYTES - kept);
            chunks.push(take);
            kept += take.length;
            // Enough for the log: stop reading (and close the connection) rather than download whatever the receiver sends.
            if (kept >= BODY_EXCERPT_BYTES) answered(false);
            return !done;
          },
          onComplete: () => answered(true),
          onError: (e: Error) => {
            const code = (e as { code?: unknown }).code;
            // Refused before anything was written: the connection is as good as before, and goes back to the pool.
            if (typeof code === 'string' && NOT_SENT.has(code))
              finish({ _tag: 'NoAnswer', error: 'connect', detail: `request not sent: ${describeError(e)}`, durationMs: elapsed() }, true);
            else noAnswer(classifyTransportError(e), describeError(e));
          },
        },
      );
    });

  const logDetail = (url: string, checked: Checked & { ok: false }) => {
    if (checked.detail !== checked.reason) opts.log?.({ url: url.slice(0, 300), error: checked.error, detail: checked.detail }, 'webhook URL refused');
  };

  return {
    checkTarget: (url) => async () => {
      const checked = await check(url);
      if (checked.ok) return { ok: true };
      logDetail(url, checked);
      return { ok: false, reason: checked.reason };
    },

    send: (request) => async () => {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      const deadline: Deadline = { expired: false, onExpire: null };
      const timer = setTimeout(() => {
        deadline.expired = true;
        deadline.onExpire?.();
      }, request.timeoutMs);
      try {
        const checked = await new Promise<Checked | 'timeout'>((settle, fail) => {
          deadline.onExpire = () => settle('timeout');
          check(request.url).then(settle, fail);
        });
        deadline.onExpire = null;
        if (checked === 'timeout') return { _tag: 'NoAnswer', error: 'timeout', detail: `no address within ${request.timeoutMs} ms`, durationMs: elapsed() };
        if (!checked.ok) {
          // The delivery log shows its endpoint's owner why their own host could not be reached, resolver error
          // included (a name that stopped resolving is theirs to fix); not an address their name resolved to and
          // was refused for, which they could not see from outside (a name pointed at an internal one).
          if (checked.error === 'dns') return { _tag: 'NoAnswer', error: 'dns', detail: checked.detail, durationMs: elapsed() };
          logDetail(request.url, checked);
          return { _tag: 'NoAnswer', error: checked.error, detail: checked.reason, durationMs: elapsed() };
        }
        return await exchange(checked, request, deadline, elapsed);
      } finally {
        clearTimeout(timer);
      }
    },
  };
};
