import type express from 'express';
import type { ClientMetadataFetcher, Clock, Crypto, CursorSigner, IdGenerator, KeyAdmission, MailTransport, PageLimits, PdfInspector, RateLimiter, SecretBox, StampPreflight, Stores, Tenant, UnitOfWork, WebhookSender } from '@esig/core';

/** Structured logging; the composition root decides where lines go. */
export interface Logger {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

/** The ports the HTTP adapter needs, provided by the composition root. */
export interface EsigHttpDeps {
  readonly stores: Stores;
  readonly uow: UnitOfWork;
  readonly clock: Clock;
  readonly ids: IdGenerator;
  readonly crypto: Crypto;
  readonly pdf: PdfInspector;
  /** Proves at signing time that the seal can stamp what a signer gives. */
  readonly stamps: StampPreflight;
  /** Pages per uploaded document and per request. */
  readonly pageLimits: PageLimits;
  readonly cursors: CursorSigner;
  readonly rateLimiter: RateLimiter;
  /**
   * Finds a request's API key and counts the call against its limits in one step, where the store can (on
   * PostgreSQL, one statement). Without it, `composeKeyAdmission(stores.apiKeys, rateLimiter)`.
   */
  readonly keyAdmission?: KeyAdmission;
  readonly logger: Logger;
  /** The mail transport for a tenant: live mail to recipients, test mail to the test sink only. */
  readonly mail: (tenant: Tenant) => MailTransport;
  /** Automatic reminders after sending, repeated at this interval; null disables them. */
  readonly reminderIntervalMs: number | null;
  /** Encrypts webhook secrets at rest. */
  readonly secrets: SecretBox;
  /** Checks webhook target URLs (and, in workers, delivers). */
  readonly sender: WebhookSender;
  readonly retryScale: number;
  readonly random: () => number;
  /** Whether the service can take traffic (database reachable); backs `/readyz`. */
  readonly ready: () => Promise<boolean>;
  /**
   * Fetches OAuth Client ID Metadata Documents (under the outbound-request rules). Without it, only clients
   * registered dynamically can authorize.
   */
  readonly clientMetadata?: ClientMetadataFetcher;
}

export interface EsigHttpOptions {
  /** Base of links this service hands out (signing links, `url` fields). */
  readonly publicUrl: string;
  /**
   * Calls per window: per API key or access token, per organization, and per client address for callers without
   * a key (the signing pages, the OAuth endpoints, requests refused before a key is known; default `perKey`).
   */
  readonly rateLimit: { readonly perKey: number; readonly perOrg: number; readonly perAddress?: number };
  readonly maxUploadBytes: number;
  /**
   * The bytes of uploads this process holds at once, counted by their `Content-Length` (`maxUploadBytes` for one
   * sent without, or compressed). An upload that would pass it is answered 503 `server_busy`, with `Retry-After`, before its body
   * is read. Default: 8 × `maxUploadBytes`.
   */
  readonly maxUploadBytesInFlight?: number;
  /**
   * What one organization in one mode may hold of `maxUploadBytesInFlight`, so that no caller can take all of it from
   * the others (a reservation is held from an upload's headers, while its body may still take `bodyTimeoutMs` to
   * come). Default: half of it, and at least `maxUploadBytes`.
   */
  readonly maxUploadBytesInFlightPerTenant?: number;
  /**
   * The largest body `mcp` reads (`@esig/mcp`'s own limit, 40 MiB). Every body of `/mcp` (of a caller with a valid access
   * token) is reserved, by its length or by this when it has none, from a budget of the same sizes as the uploads' own.
   */
  readonly mcpMaxBodyBytes?: number;
  readonly maxJsonBytes: number;
  /** How long a request body may take to arrive (408 after). */
  readonly bodyTimeoutMs: number;
  /** Express's `trust proxy` setting, for the client address behind a load balancer. */
  readonly trustProxy: boolean | number | string;
  /**
   * The tool-protocol server, mounted at `/mcp` ahead of the API's authentication and rate limits (its
   * requests are not counted; the API calls its tools make are). Null: no `/mcp`.
   */
  readonly mcp?: express.RequestHandler | null;
  /** Lifetime of an unused embedded signing session, in seconds (CONTRACT: 300). */
  readonly embedSessionTtlS: number;
}

export const defaultHttpOptions = (publicUrl: string): EsigHttpOptions => ({
  publicUrl,
  rateLimit: { perKey: 600, perOrg: 1200 },
  maxUploadBytes: 25 * 1024 * 1024,
  maxJsonBytes: 1024 * 1024,
  bodyTimeoutMs: 60_000,
  trustProxy: false,
  embedSessionTtlS: 300,
});
