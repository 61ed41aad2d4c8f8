import type { DomainError } from '@esig/core';
import { describeError } from '@esig/core';
import type * as t from 'io-ts';
import type { Problem } from './codecs.js';

/** Rejections that arise in HTTP itself rather than in a use case. */
export type HttpError =
  | { readonly _tag: 'PayloadTooLarge'; readonly limitBytes: number }
  | { readonly _tag: 'UnsupportedMediaType'; readonly expected: string }
  | { readonly _tag: 'RouteNotFound' }
  | { readonly _tag: 'RequestTimeout'; readonly limitS: number }
  | { readonly _tag: 'Internal' };

export type ApiError = DomainError | HttpError;

interface Mapping {
  readonly status: number;
  readonly code: string;
  readonly title: string;
}

/**
 * The one table from error tags to HTTP. It is a total Record over the tags, so a new domain error does not
 * compile until it is mapped here.
 */
const TABLE = {
  ValidationFailed: { status: 400, code: 'validation_failed', title: 'Validation failed' },
  Unauthenticated: { status: 401, code: 'unauthenticated', title: 'Unauthenticated' },
  InsufficientScope: { status: 403, code: 'insufficient_scope', title: 'Insufficient scope' },
  NotFound: { status: 404, code: 'not_found', title: 'Not found' },
  RouteNotFound: { status: 404, code: 'not_found', title: 'Not found' },
  InvalidState: { status: 409, code: 'invalid_state', title: 'Invalid state' },
  ConcurrentModification: { status: 409, code: 'invalid_state', title: 'Invalid state' },
  IdempotencyInProgress: { status: 409, code: 'idempotency_in_progress', title: 'Idempotent request in progress' },
  IdempotencyKeyReused: { status: 422, code: 'idempotency_key_reused', title: 'Idempotency key reused' },
  RequestTimeout: { status: 408, code: 'request_timeout', title: 'Request timeout' },
  PayloadTooLarge: { status: 413, code: 'payload_too_large', title: 'Payload too large' },
  UnsupportedMediaType: { status: 415, code: 'unsupported_media_type', title: 'Unsupported media type' },
  InvalidDocument: { status: 422, code: 'invalid_document', title: 'Invalid document' },
  RateLimited: { status: 429, code: 'rate_limited', title: 'Too many requests' },
  MailUnavailable: { status: 503, code: 'mail_unavailable', title: 'Mail unavailable' },
  ServerBusy: { status: 503, code: 'server_busy', title: 'Server busy' },
  StoreFailure: { status: 500, code: 'internal', title: 'Internal error' },
  Internal: { status: 500, code: 'internal', title: 'Internal error' },
} as const satisfies { readonly [K in ApiError['_tag']]: Mapping };

/** Every `code` a problem can carry. */
export type ProblemCode = (typeof TABLE)[keyof typeof TABLE]['code'];

/** Status and title of each problem code, from the table above (several tags may share a code). */
export const PROBLEMS: Readonly<Record<ProblemCode, { readonly status: number; readonly title: string }>> = Object.fromEntries(
  Object.values(TABLE).map((m) => [m.code, { status: m.status, title: m.title }]),
) as Record<ProblemCode, { readonly status: number; readonly title: string }>;

/** The problem `type` URI of a code. */
export const problemType = (code: ProblemCode | string): string => `urn:esig:problem:${code}`;

const detailOf = (e: ApiError): string => {
  switch (e._tag) {
    case 'RouteNotFound':
      return 'No such route.';
    case 'PayloadTooLarge':
      return `The body exceeds ${e.limitBytes} bytes.`;
    case 'RequestTimeout':
      return `The body did not arrive within ${e.limitS} s.`;
    case 'UnsupportedMediaType':
      return `Send ${e.expected}.`;
    // Never reveal internals: the cause is logged with the request id instead.
    case 'StoreFailure':
    case 'Internal':
      return 'An unexpected error occurred. Quote the requestId when reporting it.';
    default:
      return describeError(e);
  }
};

export const statusOf = (e: ApiError): number => TABLE[e._tag].status;

/** RFC 9457 problem details in the shape of CONTRACT.md. */
export const toProblem = (e: ApiError, requestId: string): t.TypeOf<typeof Problem> => {
  const m = TABLE[e._tag];
  return {
    type: problemType(m.code),
    title: m.title,
    status: m.status,
    detail: detailOf(e),
    code: m.code,
    requestId,
    ...(e._tag === 'ValidationFailed' ? { errors: e.errors.map((x) => ({ path: x.path, message: x.message })) } : {}),
  };
};

/** Errors worth replaying under an idempotency key: outcomes of the operation, not passing faults. */
export const isStorable = (e: ApiError): boolean => statusOf(e) < 500 && e._tag !== 'ConcurrentModification';
