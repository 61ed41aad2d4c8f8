import type { Task } from 'fp-ts/lib/Task.js';

export interface WebhookRequest {
  readonly url: string;
  /** Sent exactly as given: the signature covers these bytes. */
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly timeoutMs: number;
}

/** Why no HTTP answer came back. Every kind is a failure that is retried. */
export type WebhookTransportError =
  | 'refused_target' // the URL or a resolved address is not allowed (SSRF rules); checked before connecting
  | 'dns' // the host did not resolve
  | 'connect' // connection refused or reset
  | 'tls' // certificate or handshake failure
  | 'timeout'; // no complete answer in time

export type WebhookResponse =
  | {
      readonly _tag: 'Answered';
      readonly status: number;
      /** The first bytes of the body (CONTRACT: 1,024), decoded as UTF-8 with replacement. */
      readonly bodyExcerpt: string;
      /** `Retry-After` in seconds when the receiver sent one (429, 503). */
      readonly retryAfterS: number | null;
      readonly durationMs: number;
    }
  | { readonly _tag: 'NoAnswer'; readonly error: WebhookTransportError; readonly detail: string; readonly durationMs: number };

/**
 * POSTs one webhook delivery. Implementations enforce the target rules at every connection: HTTPS only,
 * no credentials in the URL, every resolved address public unicast (unless explicitly allowed), connect
 * only to the address that was checked, never follow a redirect (a 3xx is just an answer). It never
 * fails: every outcome is a value.
 */
export interface WebhookSender {
  send(request: WebhookRequest): Task<WebhookResponse>;
  /**
   * The same target rules as `send`, without sending: for checking a URL when an endpoint is saved. The
   * `reason` is shown to the caller: it says what is wrong with the URL (not https, a private address it
   * names, a host that does not resolve), never the server's own view of the network (the resolver's error,
   * the address a name resolved to).
   */
  checkTarget(url: string): Task<{ readonly ok: true } | { readonly ok: false; readonly reason: string }>;
}
