/**
 * `@esig/client`: the typed TypeScript client for the esig API. It needs nothing but `fetch`, so it runs on
 * Node ≥ 20, in browsers, Deno, Bun and edge runtimes.
 *
 * @packageDocumentation
 */
export { Esig } from './client.js';
export type { EsigOptions } from './client.js';
export {
  EsigAPIError,
  EsigAuthenticationError,
  EsigConnectionError,
  EsigError,
  EsigIdempotencyError,
  EsigInvalidRequestError,
  EsigInvalidStateError,
  EsigNotFoundError,
  EsigPermissionError,
  EsigRateLimitError,
  EsigSignatureVerificationError,
  EsigTimeoutError,
} from './errors.js';
export type { ClientErrorCode, EsigErrorInit, FieldError } from './errors.js';
export { PagedList } from './pagination.js';
export type { Page } from './pagination.js';
export type { Answer, Call, FetchLike, RequestOptions } from './transport.js';
export type { ConstructEventOptions, WebhookEvent } from './webhooks.js';
export type * from './types.js';
export { VERSION } from './version.js';
