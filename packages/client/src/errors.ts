import type { ErrorCode } from './generated/api-types.js';

/** One invalid input of a `validation_failed` problem: where (`documentIds.0`, `Idempotency-Key`) and why. */
export interface FieldError {
  readonly path: string;
  readonly message: string;
}

/** What every esig error carries; `status` is 0 and `requestId` null when no answer arrived. */
export interface EsigErrorInit {
  readonly status: number;
  readonly code: ErrorCode | ClientErrorCode | (string & {});
  readonly detail: string;
  readonly requestId: string | null;
  readonly errors?: readonly FieldError[];
  readonly title?: string;
  readonly type?: string;
  readonly headers?: Headers;
  readonly cause?: unknown;
}

/** Codes of failures the client itself observed, with no problem document from the server. */
export type ClientErrorCode = 'connection_error' | 'timeout' | 'unexpected_response' | 'signature_verification_failed';

/**
 * Any failure of an esig call. The fields mirror the API's RFC 9457 problem document (`status`, `code`,
 * `detail`, `requestId`, `errors`); branch on `code`, or on the subclass of its family.
 *
 * @example
 * try {
 *   await esig.signatureRequests.send(id);
 * } catch (e) {
 *   if (e instanceof EsigInvalidStateError) console.log('already sent:', e.detail);
 *   else throw e;
 * }
 */
export class EsigError extends Error {
  override readonly name: string = 'EsigError';
  readonly status: number;
  readonly code: ErrorCode | ClientErrorCode | (string & {});
  readonly detail: string;
  /** The `X-Request-Id` of the failed call (`log_…`), to quote in a report; null when no answer arrived. */
  readonly requestId: string | null;
  readonly errors: readonly FieldError[];
  readonly title: string;
  readonly type: string;
  /** The response headers, when there was a response. */
  readonly headers: Headers | undefined;

  constructor(init: EsigErrorInit) {
    super(`${init.detail}${init.requestId ? ` (request ${init.requestId})` : ''}`, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.detail = init.detail;
    this.requestId = init.requestId;
    this.errors = init.errors ?? [];
    this.title = init.title ?? init.code;
    this.type = init.type ?? `urn:esig:problem:${init.code}`;
    this.headers = init.headers;
  }
}

/** 400 `validation_failed`, 413 `payload_too_large`, 415 `unsupported_media_type`, 408 `request_timeout`, 422 `invalid_document`: the request itself is wrong. */
export class EsigInvalidRequestError extends EsigError {
  override readonly name: string = 'EsigInvalidRequestError';
}
/** 401 `unauthenticated`: no key, or an unknown or revoked one. */
export class EsigAuthenticationError extends EsigError {
  override readonly name: string = 'EsigAuthenticationError';
}
/** 403 `insufficient_scope`: the key lacks the scope `detail` names. */
export class EsigPermissionError extends EsigError {
  override readonly name: string = 'EsigPermissionError';
}
/** 404 `not_found`: absent, or of another organization or mode (never told apart). */
export class EsigNotFoundError extends EsigError {
  override readonly name: string = 'EsigNotFoundError';
}
/** 409 `invalid_state`: not allowed in the resource's current state (send twice, add a recipient after sending…). */
export class EsigInvalidStateError extends EsigError {
  override readonly name: string = 'EsigInvalidStateError';
}
/** 409 `idempotency_in_progress` (retried for you first) or 422 `idempotency_key_reused`. */
export class EsigIdempotencyError extends EsigError {
  override readonly name: string = 'EsigIdempotencyError';
}
/** 429 `rate_limited`; `retryAfter` is the server's `Retry-After`, in seconds. */
export class EsigRateLimitError extends EsigError {
  override readonly name: string = 'EsigRateLimitError';
  readonly retryAfter: number | null;
  constructor(init: EsigErrorInit & { readonly retryAfter?: number | null }) {
    super(init);
    this.retryAfter = init.retryAfter ?? (init.headers ? retryAfterSeconds(init.headers) : null);
  }
}
/** 5xx (`internal`, `mail_unavailable`, `server_busy`) or an answer that is not a problem document: a fault on the server's side. */
export class EsigAPIError extends EsigError {
  override readonly name: string = 'EsigAPIError';
}
/** No answer: the network failed (`connection_error`), or the call outlived its timeout (`EsigTimeoutError`). */
export class EsigConnectionError extends EsigError {
  override readonly name: string = 'EsigConnectionError';
}
/** The call outlived the client's `timeoutMs`. */
export class EsigTimeoutError extends EsigConnectionError {
  override readonly name: string = 'EsigTimeoutError';
}
/** `constructEvent` found no valid signature; `reason` says why. The receiver should answer 400. */
export class EsigSignatureVerificationError extends EsigError {
  override readonly name: string = 'EsigSignatureVerificationError';
  readonly reason: 'missing_header' | 'malformed_header' | 'timestamp_out_of_tolerance' | 'no_matching_signature';
  constructor(reason: EsigSignatureVerificationError['reason']) {
    super({ status: 0, code: 'signature_verification_failed', detail: `webhook signature verification failed: ${reason}`, requestId: null });
    this.reason = reason;
  }
}

type ErrorClass = new (init: EsigErrorInit) => EsigError;

/** The family of each code the API answers with: a new code fails to compile until it is placed here. */
const FAMILIES: Record<ErrorCode, ErrorClass> = {
  validation_failed: EsigInvalidRequestError,
  payload_too_large: EsigInvalidRequestError,
  unsupported_media_type: EsigInvalidRequestError,
  request_timeout: EsigInvalidRequestError,
  invalid_document: EsigInvalidRequestError,
  unauthenticated: EsigAuthenticationError,
  insufficient_scope: EsigPermissionError,
  not_found: EsigNotFoundError,
  invalid_state: EsigInvalidStateError,
  idempotency_in_progress: EsigIdempotencyError,
  idempotency_key_reused: EsigIdempotencyError,
  rate_limited: EsigRateLimitError,
  internal: EsigAPIError,
  mail_unavailable: EsigAPIError,
  server_busy: EsigAPIError,
};

/** `Retry-After` in seconds: delta-seconds, or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export const retryAfterSeconds = (headers: Headers, now: number = Date.now()): number | null => {
  const value = headers.get('retry-after')?.trim();
  if (!value) return null;
  if (/^\d+$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
};

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === 'object' && x !== null && !Array.isArray(x);

/** The error for a non-2xx answer: its problem document mapped to the family of its `code`. */
export const errorFromResponse = (status: number, headers: Headers, body: unknown, what = `HTTP ${status} without a problem document`): EsigError => {
  const requestId = headers.get('x-request-id');
  const problem = status >= 400 && isRecord(body) && typeof body.code === 'string' && typeof body.detail === 'string' ? body : null;
  if (problem === null) {
    const text = typeof body === 'string' ? body.slice(0, 200) : '';
    const init = { status, code: 'unexpected_response', detail: `${what}${text ? `: ${text}` : ''}`, requestId, headers };
    return status === 429 ? new EsigRateLimitError({ ...init, retryAfter: retryAfterSeconds(headers) }) : new EsigAPIError(init);
  }
  const init: EsigErrorInit = {
    status,
    code: problem.code as string,
    detail: problem.detail as string,
    requestId: typeof problem.requestId === 'string' ? problem.requestId : requestId,
    errors: Array.isArray(problem.errors) ? (problem.errors as FieldError[]).map((e) => ({ path: String(e.path), message: String(e.message) })) : [],
    ...(typeof problem.title === 'string' ? { title: problem.title } : {}),
    ...(typeof problem.type === 'string' ? { type: problem.type } : {}),
    headers,
  };
  if (init.code === 'rate_limited') return new EsigRateLimitError({ ...init, retryAfter: retryAfterSeconds(headers) });
  const family = FAMILIES[init.code as ErrorCode];
  if (family !== undefined) return new family(init);
  // A code newer than this client: its status family decides.
  if (status >= 500) return new EsigAPIError(init);
  if (status === 401) return new EsigAuthenticationError(init);
  if (status === 403) return new EsigPermissionError(init);
  if (status === 404) return new EsigNotFoundError(init);
  if (status === 409) return new EsigInvalidStateError(init);
  return new EsigInvalidRequestError(init);
};
