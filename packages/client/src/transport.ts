import type { EsigError } from './errors.js';
import { EsigConnectionError, EsigTimeoutError, errorFromResponse, retryAfterSeconds } from './errors.js';
import { VERSION } from './version.js';

/** The `fetch` the client calls: the platform's, or one given for tests and proxies. */
export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

/** Options of one call; every method takes them as its last argument. */
export interface RequestOptions {
  /**
   * Writes only: the `Idempotency-Key` to send. One is generated when absent; either way the same key is
   * sent on every retry, so a retried write happens at most once.
   */
  readonly idempotencyKey?: string;
  /** Retries of this call; default: the client's `maxRetries`. */
  readonly maxRetries?: number;
  /** Milliseconds each attempt may take, the body included; default: the client's `timeoutMs`. */
  readonly timeoutMs?: number;
  /** Aborts the call (and any wait before a retry); the promise rejects with the signal's reason. */
  readonly signal?: AbortSignal;
}

export interface TransportConfig {
  readonly apiKey: string;
  readonly baseUrl: string;
  readonly fetch: FetchLike;
  readonly maxRetries: number;
  readonly timeoutMs: number;
  /** The longest `Retry-After` waited for before retrying; a longer one is answered at once with the error. */
  readonly maxRetryAfterMs: number;
  /** Randomness for the backoff jitter; `Math.random` unless a test fixes it. */
  readonly random: () => number;
}

export interface Call {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  readonly path: string;
  readonly query?: Readonly<Record<string, string | number | boolean | undefined>>;
  /** A JSON body, or bytes with their content type. */
  readonly body?: unknown;
  readonly bytes?: { readonly data: Uint8Array; readonly contentType: string };
  /** What to answer with: parsed JSON (default) or the body's bytes. */
  readonly accept?: 'json' | 'bytes';
  /** Media type asked for in `Accept`; defaults follow `accept`. */
  readonly acceptType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The answer of a successful call, with what a caller may want from its headers. */
export interface Answer<T> {
  readonly data: T;
  readonly status: number;
  readonly headers: Headers;
  readonly requestId: string | null;
}

export const CLIENT_HEADER = `esig-client-js/${VERSION}`;
const INITIAL_DELAY_MS = 500;
const MAX_DELAY_MS = 8_000;

/**
 * The wait before retry number `retry` (1-based): exponential from 0.5 s, capped at 8 s, with "equal jitter"
 * (between half and all of it), so clients that failed together do not come back together.
 */
export const backoffMs = (retry: number, random: () => number): number => {
  const ceiling = Math.min(MAX_DELAY_MS, INITIAL_DELAY_MS * 2 ** (retry - 1));
  return ceiling / 2 + random() * (ceiling / 2);
};

/** Whether an answer is worth another attempt: overload, a fault, a rate limit, a write still running. */
const retryable = (e: EsigError): boolean =>
  e instanceof EsigConnectionError || e.status >= 500 || e.status === 429 || (e.status === 409 && e.code === 'idempotency_in_progress');

/** A random key: `crypto.randomUUID` where the platform has it (secure contexts), else 122 random bits the same way. */
export const newIdempotencyKey = (): string => {
  const c = globalThis.crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  const b = c.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = [...b].map((x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
};

const sleep = (ms: number, signal: AbortSignal | undefined) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });

// Browsers refuse (or ignore) a script-set User-Agent; everywhere else it names the client.
const inBrowser = () => typeof (globalThis as { document?: unknown }).document !== 'undefined';

/** Sends calls: authentication, idempotency keys, timeouts, retries with backoff, errors as `EsigError`s. */
export const createTransport = (config: TransportConfig) => {
  const base = config.baseUrl.replace(/\/+$/, '');

  const urlOf = (call: Call) => {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(call.query ?? {})) if (v !== undefined) qs.set(k, String(v));
    const q = qs.toString();
    return `${base}${call.path}${q ? `?${q}` : ''}`;
  };

  /** One attempt: the answer, or the error it amounts to (never thrown, so the caller decides on a retry). */
  const attempt = async <T>(url: string, init: RequestInit, call: Call, timeoutMs: number, signal: AbortSignal | undefined): Promise<Answer<T> | EsigError> => {
    if (signal?.aborted) throw signal.reason;
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
    const onAbort = () => controller.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    let res: Response;
    let raw: string | Uint8Array;
    try {
      res = await config.fetch(url, { ...init, signal: controller.signal });
      // The timeout covers the body too: a server that stalls mid-answer is a failed attempt.
      raw = call.accept === 'bytes' && res.ok ? new Uint8Array(await res.arrayBuffer()) : await res.text();
    } catch (e) {
      if (signal?.aborted) throw signal.reason;
      if (timedOut) return new EsigTimeoutError({ status: 0, code: 'timeout', detail: `No answer within ${timeoutMs} ms`, requestId: null, cause: e });
      return new EsigConnectionError({ status: 0, code: 'connection_error', detail: `The request failed before an answer arrived: ${String((e as Error)?.message ?? e)}`, requestId: null, cause: e });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
    const json = /json/.test(res.headers.get('content-type') ?? '');
    let body: unknown = raw;
    if (typeof raw === 'string' && raw !== '' && (json || res.ok)) {
      try {
        body = JSON.parse(raw);
      } catch {
        // Not JSON after all (a proxy's page, say): an error keeps the text for its detail; a success is unexpected.
        if (res.ok) return errorFromResponse(res.status, res.headers, raw, 'a 2xx answer that is not JSON');
      }
    }
    if (!res.ok) return errorFromResponse(res.status, res.headers, body);
    return { data: (raw === '' ? undefined : body) as T, status: res.status, headers: res.headers, requestId: res.headers.get('x-request-id') };
  };

  /**
   * Sends `call`, retrying on network failures, timeouts, 409 `idempotency_in_progress`, 429 (after its
   * `Retry-After`) and 5xx, up to `maxRetries` times; a write carries one `Idempotency-Key` on every attempt.
   */
  const request = async <T>(call: Call, options: RequestOptions = {}): Promise<Answer<T>> => {
    const write = call.method !== 'GET';
    const headers: Record<string, string> = {
      Authorization: `Bearer ${config.apiKey}`,
      Accept: call.acceptType ?? (call.accept === 'bytes' ? 'application/pdf' : 'application/json'),
      'Esig-Client': CLIENT_HEADER,
      ...(inBrowser() ? {} : { 'User-Agent': CLIENT_HEADER }),
      ...(call.headers ?? {}),
    };
    let body: RequestInit['body'];
    if (call.bytes) {
      headers['Content-Type'] = call.bytes.contentType;
      body = call.bytes.data as Uint8Array<ArrayBuffer>;
    } else if (call.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(call.body);
    }
    if (write) headers['Idempotency-Key'] = options.idempotencyKey ?? newIdempotencyKey();

    const url = urlOf(call);
    const init: RequestInit = { method: call.method, headers, ...(body !== undefined ? { body } : {}) };
    const maxRetries = options.maxRetries ?? config.maxRetries;
    const timeoutMs = options.timeoutMs ?? config.timeoutMs;
    for (let retry = 0; ; retry++) {
      const outcome = await attempt<T>(url, init, call, timeoutMs, options.signal);
      if (!(outcome instanceof Error)) return outcome;
      if (retry >= maxRetries || !retryable(outcome)) throw outcome;
      const after = outcome.headers ? retryAfterSeconds(outcome.headers) : null;
      if (after !== null && after * 1000 > config.maxRetryAfterMs) throw outcome;
      await sleep(after !== null ? after * 1000 : backoffMs(retry + 1, config.random), options.signal);
    }
  };

  return { request };
};

export type Transport = ReturnType<typeof createTransport>;
