import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { WebhookRequest, WebhookResponse, WebhookSender, WebhookTransportError } from '@esig/core';
import { Pool } from 'undici';
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
}

export const DEFAULT_USER_AGENT = 'esig-webhooks/1.0 (+https://github.com/esig)';

/** The delivery log keeps this many bytes of a response body (CONTRACT). */
export const BODY_EXCERPT_BYTES = 1024;

/** Headers this sender writes itself; a caller's value for one of them is dropped. */
const OWN_HEADERS = new Set(['host', 'content-type', 'content-length', 'user-agent', 'transfer-encoding', 'connection']);

const defaultResolve = async (host: string): Promise<readonly string[]> =>
  (await dnsLookup(host, { all: true, verbatim: true })).map((a) => a.address);

type Checked =
  | { readonly ok: true; readonly host: string; readonly port: number; readonly path: string; readonly literal: boolean; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly error: 'refused_target' | 'dns'; readonly detail: string };

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
    if (!target.ok) return { ok: false, error: 'refused_target', detail: target.reason };
    const { host, literal } = target;
    let addresses: readonly string[];
    if (literal) addresses = [host];
    else {
      try {
        addresses = await resolve(host);
      } catch (e) {
        return { ok: false, error: 'dns', detail: `${host}: ${describeError(e)}` };
      }
      if (addresses.length === 0) return { ok: false, error: 'dns', detail: `${host}: no addresses` };
    }
    if (!literal && allow.names.has(normaliseHostName(host))) return { ...target, addresses };
    // Every address must pass, not just the one a connection would pick first.
    for (const address of addresses) {
      const verdict = checkAddressWith(address, allow);
      if (!verdict.ok) return { ok: false, error: 'refused_target', detail: literal ? verdict.reason : `${host} resolves to ${verdict.reason}` };
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

/** Connection pools kept at most before idle ones are dropped (one per endpoint and address set in use). */
const MAX_IDLE_POOLS = 64;

/**
 * The longest a connection may take to open, TLS handshake included. A delivery's own deadline ends the delivery
 * sooner; this ends the attempt to connect, which a pool carries on with for a request waiting on it.
 */
const CONNECT_TIMEOUT_MS = 10_000;

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
const NOT_SENT = 'UND_ERR_INVALID_ARG';
/** undici's own connect deadline. */
const CONNECT_TIMEOUT = 'UND_ERR_CONNECT_TIMEOUT';

/**
 * A `WebhookSender` over HTTPS (undici's HTTP/1.1 client, one request at a time per connection). Each `send` parses the URL, resolves the host once,
 * checks every address, and connects only to those addresses (the host name still drives SNI, certificate
 * checking and the Host header). Certificates are always verified; redirects are never followed; the whole
 * exchange, resolution included, must finish within `timeoutMs`.
 *
 * Connections are kept alive and reused, without weakening that: each `send` still resolves and checks first,
 * and then takes its connection from the pool of exactly (port, host name, the set of addresses just checked).
 * Every connection of that pool was opened through the same pinned lookup, so it leads to one of those
 * addresses, all of which passed the check of this very delivery. When the name resolves differently (DNS
 * rebinding to a private address, say), the new set is checked and refused before any pool is asked, or, if it
 * passes, lands in another pool: a connection to an old address is never reused for a new answer.
 *
 * undici offers an answered connection again one turn of the event loop later (it first reads whatever the
 * receiver sent unasked), so a delivery sent in the very turn another was answered opens a connection of its
 * own: a pool holds up to about twice the deliveries in flight at once.
 *
 * Why undici and not `node:https`: a kept-alive POST through undici's `dispatch` cost 36 µs of CPU on this
 * project's machine against 81–88 µs through an `https.Agent` (20,000 POSTs, 16 at a time, to one receiver),
 * and a webhook worker's rate is bounded by its CPU per delivery (`npm run bench:sender`).
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
  const pools = new Map<string, Pool>();
  /** The pool whose connections all lead to an address of `target.addresses` on `target.port`, for `target.host`. */
  const poolFor = (target: Extract<Checked, { ok: true }>): Pool => {
    const key = `${target.port}|${target.host}|${[...target.addresses].sort().join(',')}`;
    let pool = pools.get(key);
    if (pool === undefined) {
      if (pools.size >= MAX_IDLE_POOLS)
        for (const [k, p] of pools) {
          const { running, pending, queued } = p.stats;
          if (running + pending + queued === 0) {
            // Nothing in flight: closing ends its idle connections; a late failure to do so has no one to tell.
            p.close().catch(() => undefined);
            pools.delete(k);
          }
        }
      pool = new Pool(`https://${target.literal && target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`, {
        // The send's own deadline bounds the exchange; undici's would only race it.
        headersTimeout: 0,
        bodyTimeout: 0,
        // Idle connections close after this, sooner when the receiver's `Keep-Alive: timeout=` says so: a second
        // under its timeout, so that it rarely closes one just as it is reused.
        keepAliveTimeout: idleSocketMs,
        keepAliveMaxTimeout: idleSocketMs,
        keepAliveTimeoutThreshold: 1_000,
        connect: {
          // Every connection of this pool goes to an address of this set, whatever the name resolves to later.
          lookup: pinnedLookup(target.addresses),
          rejectUnauthorized: true,
          timeout: CONNECT_TIMEOUT_MS,
          ...(secureContext === undefined ? {} : { secureContext }),
        },
      });
      pools.set(key, pool);
    }
    return pool;
  };

  const check = makeTargetCheck(opts);

  const exchange = (target: Extract<Checked, { ok: true }>, request: WebhookRequest, deadline: Deadline, elapsed: () => number): Promise<WebhookResponse> =>
    new Promise((settle) => {
      let done = false;
      // undici's way to end this request, once it is on a connection (not while it waits for one to open).
      let abort: ((reason?: Error) => void) | null = null;
      const finish = (r: WebhookResponse) => {
        if (done) return;
        done = true;
        deadline.onExpire = null;
        settle(r);
      };
      const noAnswer = (error: WebhookTransportError, detail: string) => finish({ _tag: 'NoAnswer', error, detail, durationMs: elapsed() });
      const timedOut = () => noAnswer('timeout', `no complete answer within ${request.timeoutMs} ms`);
      if (deadline.expired) {
        timedOut();
        return;
      }

      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(request.headers)) if (!OWN_HEADERS.has(name.toLowerCase())) headers[name] = value;
      headers['content-type'] = 'application/json';
      headers['user-agent'] = userAgent;

      let status = 0;
      let retryAfter: string | undefined;
      const chunks: Buffer[] = [];
      let kept = 0;
      const answered = () =>
        finish({
          _tag: 'Answered',
          status,
          bodyExcerpt: decoder.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
          retryAfterS: parseRetryAfter(retryAfter, now()),
          durationMs: elapsed(),
        });
      const stop = () => abort?.(new Error('the webhook sender is done with this exchange'));
      deadline.onExpire = () => {
        timedOut();
        stop();
      };
      // undici writes the headers as latin1 and the body (a string) as UTF-8, and sets Content-Length itself.
      // `reset` asks for `Connection: close` and no reuse: a connection per delivery when keepAlive is off.
      poolFor(target).dispatch(
        { method: 'POST', path: target.path, headers, body: request.body, ...(keepAlive ? {} : { reset: true }) },
        {
          onConnect: (a: (reason?: Error) => void) => {
            abort = a;
            // Timed out while it waited for its connection: it goes no further.
            if (done) stop();
          },
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
            if (kept >= BODY_EXCERPT_BYTES) {
              // Enough for the log: stop reading rather than download whatever the receiver sends.
              answered();
              stop();
              return false;
            }
            return true;
          },
          onComplete: answered,
          onError: (e: Error) => {
            const code = (e as { code?: unknown }).code;
            if (code === NOT_SENT) noAnswer('connect', `request not sent: ${describeError(e)}`);
            else if (code === CONNECT_TIMEOUT) noAnswer('timeout', describeError(e));
            else noAnswer(classifyTransportError(e), describeError(e));
          },
        },
      );
    });

  return {
    checkTarget: (url) => async () => {
      const checked = await check(url);
      return checked.ok ? { ok: true } : { ok: false, reason: checked.error === 'dns' ? `did not resolve: ${checked.detail}` : checked.detail };
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
        if (!checked.ok) return { _tag: 'NoAnswer', error: checked.error, detail: checked.detail, durationMs: elapsed() };
        return await exchange(checked, request, deadline, elapsed);
      } finally {
        clearTimeout(timer);
      }
    },
  };
};
