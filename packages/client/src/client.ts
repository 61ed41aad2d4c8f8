import { ApiKeys, Documents, Events, Logs, SignatureRequests, TestMailbox, WebhookDeliveries, WebhookEndpoints } from './resources.js';
import type { Answer, Call, FetchLike, RequestOptions, Transport } from './transport.js';
import { createTransport } from './transport.js';
import { constructEvent, generateTestHeader } from './webhooks.js';

/** How to reach esig. */
export interface EsigOptions {
  /** An API key (`esig_test_…` / `esig_live_…`) or an OAuth access token (`esig_oat_…`). */
  readonly apiKey: string;
  /** The server's origin, e.g. `http://localhost:3000`; paths start with `/api/v1`. */
  readonly baseUrl: string;
  /** The `fetch` to call; default the platform's. For tests, proxies, or a runtime without a global one. */
  readonly fetch?: FetchLike;
  /** Retries after a network error, a timeout, 409 `idempotency_in_progress`, 429 or 5xx; default 2. */
  readonly maxRetries?: number;
  /** Milliseconds each attempt may take, the body included; default 60,000. */
  readonly timeoutMs?: number;
  /** The longest `Retry-After` (ms) waited for before a retry; a longer one rejects at once. Default 60,000. */
  readonly maxRetryAfterMs?: number;
}

/** Verifies and parses webhook deliveries; needs no client (`Esig.webhooks.constructEvent`). */
const webhookHelpers = { constructEvent, generateTestHeader } as const;

/**
 * The esig API client. Every method returns a promise of the API's JSON (typed from the server's own
 * codecs), or bytes for PDFs; every `list` returns a `PagedList` to walk with `for await`; failures are
 * `EsigError`s. Writes carry an `Idempotency-Key` (generated unless given) and are retried with it.
 *
 * @example
 * import { Esig } from '@esig/client';
 *
 * const esig = new Esig({ apiKey: process.env.ESIG_API_KEY!, baseUrl: 'http://localhost:3000' });
 * const doc = await esig.documents.upload(pdfBytes, { name: 'nda.pdf' });
 * const request = await esig.signatureRequests.create({ title: 'NDA', documentIds: [doc.id] });
 */
export class Esig {
  /** Webhook verification, usable without a client: `await Esig.webhooks.constructEvent(raw, header, secret)`. */
  static readonly webhooks = webhookHelpers;

  readonly documents: Documents;
  readonly signatureRequests: SignatureRequests;
  readonly webhooks: { readonly endpoints: WebhookEndpoints; readonly deliveries: WebhookDeliveries } & typeof webhookHelpers;
  readonly events: Events;
  readonly apiKeys: ApiKeys;
  readonly logs: Logs;
  /** Test keys only: the mail test mode keeps instead of sending (`GET /api/v1/test-mailbox`). */
  readonly testMailbox: TestMailbox;
  readonly #transport: Transport;

  constructor(options: EsigOptions) {
    if (typeof options?.apiKey !== 'string' || options.apiKey === '') throw new TypeError('Esig: apiKey is required');
    if (typeof options.baseUrl !== 'string' || !/^https?:\/\//.test(options.baseUrl)) throw new TypeError('Esig: baseUrl must be an http(s) URL, e.g. http://localhost:3000');
    const platformFetch = (globalThis as { fetch?: FetchLike }).fetch;
    const fetchImpl = options.fetch ?? (platformFetch ? (input: string, init: RequestInit) => platformFetch(input, init) : undefined);
    if (fetchImpl === undefined) throw new TypeError('Esig: no global fetch; pass the fetch option');
    const maxRetries = options.maxRetries ?? 2;
    if (!Number.isInteger(maxRetries) || maxRetries < 0) throw new RangeError('Esig: maxRetries must be a whole number >= 0');
    this.#transport = createTransport({
      apiKey: options.apiKey,
      baseUrl: options.baseUrl,
      fetch: fetchImpl,
      maxRetries,
      timeoutMs: options.timeoutMs ?? 60_000,
      maxRetryAfterMs: options.maxRetryAfterMs ?? 60_000,
      random: Math.random,
    });
    this.documents = new Documents(this.#transport);
    this.signatureRequests = new SignatureRequests(this.#transport);
    this.webhooks = { endpoints: new WebhookEndpoints(this.#transport), deliveries: new WebhookDeliveries(this.#transport), ...webhookHelpers };
    this.events = new Events(this.#transport);
    this.apiKeys = new ApiKeys(this.#transport);
    this.logs = new Logs(this.#transport);
    this.testMailbox = new TestMailbox(this.#transport);
  }

  /**
   * Any call the resources do not cover yet, with the same authentication, idempotency, retries and errors:
   * `await esig.request({ method: 'GET', path: '/api/v1/...' })`. Answers with the data and the response's
   * status and headers.
   */
  request<T = unknown>(call: Call, options?: RequestOptions): Promise<Answer<T>> {
    return this.#transport.request<T>(call, options);
  }
}
