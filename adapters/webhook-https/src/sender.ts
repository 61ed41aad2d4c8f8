import { lookup as dnsLookup } from 'node:dns/promises';
import { Agent, request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';
import { performance } from 'node:perf_hooks';
import { createSecureContext, rootCertificates } from 'node:tls';
import type { WebhookRequest, WebhookResponse, WebhookSender, WebhookTransportError } from '@esig/core';
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

const NON_ASCII = /[^\x00-\x7f]/;

/**
 * A send's one timer, and what its end interrupts: the resolution, then the exchange. A plain field rather
 * than an AbortSignal: an EventTarget's listeners cost a measurable share of a kept-alive POST.
 */
interface Deadline {
  expired: boolean;
  onExpire: (() => void) | null;
}

/** Agents kept at most before idle ones are dropped (one per endpoint and address set in use). */
const MAX_IDLE_AGENTS = 64;

/**
 * A `WebhookSender` over `node:https`. Each `send` parses the URL, resolves the host once, checks every
 * address, and connects only to those addresses (the host name still drives SNI, certificate checking and
 * the Host header). Certificates are always verified; redirects are never followed; the whole exchange,
 * resolution included, must finish within `timeoutMs`.
 *
 * Connections are kept alive and reused, without weakening that: each `send` still resolves and checks
 * first, and then takes its connection from the agent of exactly (port, host name, the set of addresses
 * just checked). Every socket of that agent was opened through the same pinned lookup, so it leads to one
 * of those addresses, all of which passed the check of this very delivery. When the name resolves
 * differently (DNS rebinding to a private address, say), the new set is checked and refused before any
 * agent is asked, or, if it passes, lands in another agent: a connection to an old address is never reused
 * for a new answer.
 */
export const createHttpsWebhookSender = (opts: HttpsWebhookSenderOptions = {}): WebhookSender => {
  const userAgent = opts.userAgent ?? DEFAULT_USER_AGENT;
  const asciiAgent = !NON_ASCII.test(userAgent);
  const now = opts.now ?? Date.now;
  // Built once: a TLS context made from every root certificate costs tens of milliseconds, far more than
  // the handshake itself, so making one per request would cap a worker at a few dozen deliveries a second.
  const secureContext =
    opts.extraCa === undefined
      ? undefined
      : createSecureContext({ ca: [...rootCertificates, typeof opts.extraCa === 'string' ? opts.extraCa : opts.extraCa.toString('utf8')] });

  const keepAlive = opts.keepAlive ?? true;
  const idleSocketMs = opts.idleSocketMs ?? 4_000;
  const agents = new Map<string, Agent>();
  /** The agent whose connections all lead to an address of `target.addresses` on `target.port`, for `target.host`. */
  const agentFor = (target: Extract<Checked, { ok: true }>): Agent => {
    const key = `${target.port}|${target.host}|${[...target.addresses].sort().join(',')}`;
    let agent = agents.get(key);
    if (agent === undefined) {
      if (agents.size >= MAX_IDLE_AGENTS)
        for (const [k, a] of agents)
          if (Object.keys(a.sockets).length === 0 && Object.keys(a.requests).length === 0) {
            a.destroy();
            agents.delete(k);
          }
      // `timeout` closes idle (free) sockets only; a delivery in flight is bounded by its own timer.
      agent = new Agent({ keepAlive: true, timeout: idleSocketMs, scheduling: 'lifo' });
      agents.set(key, agent);
    }
    return agent;
  };

  const check = makeTargetCheck(opts);

  const exchange = (target: Extract<Checked, { ok: true }>, request: WebhookRequest, deadline: Deadline, elapsed: () => number): Promise<WebhookResponse> =>
    new Promise((settle) => {
      let done = false;
      const finish = (r: WebhookResponse) => {
        if (done) return;
        done = true;
        deadline.onExpire = null;
        settle(r);
      };
      const noAnswer = (error: WebhookTransportError, detail: string) => finish({ _tag: 'NoAnswer', error, detail, durationMs: elapsed() });
      if (deadline.expired) {
        noAnswer('timeout', `no complete answer within ${request.timeoutMs} ms`);
        return;
      }

      const headers: Record<string, string> = {};
      // Whether every header value is ASCII, found while they are copied (see the body's `end` below).
      let ascii = asciiAgent;
      for (const [name, value] of Object.entries(request.headers))
        if (!OWN_HEADERS.has(name.toLowerCase())) {
          headers[name] = value;
          if (ascii && NON_ASCII.test(value)) ascii = false;
        }
      headers['Content-Type'] = 'application/json';
      headers['Content-Length'] = String(Buffer.byteLength(request.body, 'utf8'));
      headers['User-Agent'] = userAgent;

      let req: ReturnType<typeof httpsRequest>;
      try {
        req = httpsRequest({
          method: 'POST',
          host: target.host,
          port: target.port,
          path: target.path,
          headers,
          // Named explicitly although Node derives the same: the certificate is checked against the host name.
          ...(target.literal ? {} : { servername: target.host }),
          lookup: pinnedLookup(target.addresses),
          // A pooled connection only from the agent of exactly these checked addresses (see above), or none.
          agent: keepAlive ? agentFor(target) : false,
          rejectUnauthorized: true,
          ...(secureContext === undefined ? {} : { secureContext }),
        });
      } catch (e) {
        // Only a malformed request (a header value with a line break, say) throws here.
        noAnswer('connect', `request not sent: ${describeError(e)}`);
        return;
      }
      deadline.onExpire = () => {
        noAnswer('timeout', `no complete answer within ${request.timeoutMs} ms`);
        req.destroy();
      };

      req.on('error', (e) => noAnswer(classifyTransportError(e), describeError(e)));
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let kept = 0;
        const answered = () =>
          finish({
            _tag: 'Answered',
            status: res.statusCode ?? 0,
            bodyExcerpt: decoder.decode(Buffer.concat(chunks)),
            retryAfterS: parseRetryAfter(res.headers['retry-after'], now()),
            durationMs: elapsed(),
          });
        res.on('data', (chunk: Buffer) => {
          const take = chunk.subarray(0, BODY_EXCERPT_BYTES - kept);
          chunks.push(take);
          kept += take.length;
          if (kept >= BODY_EXCERPT_BYTES) {
            // Enough for the log: stop reading rather than download whatever the receiver sends.
            answered();
            req.destroy();
          }
        });
        res.on('end', answered);
        res.on('error', (e) => noAnswer(classifyTransportError(e), describeError(e)));
      });
      // As text, Node writes the headers and the body as one string; a Buffer is queued as a chunk of its own
      // behind the headers, and the two go out through a writev. But that one string is encoded as UTF-8, while
      // headers on their own go out as latin1: a header value with a byte above 0x7F keeps the Buffer.
      req.end(ascii ? request.body : Buffer.from(request.body, 'utf8'));
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
