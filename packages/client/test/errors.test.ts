import { describe, expect, it } from 'vitest';
import { PROBLEMS } from '@esig/http-express';
import type { ErrorCode } from '../src/index.js';
import {
  EsigAPIError,
  EsigAuthenticationError,
  EsigError,
  EsigIdempotencyError,
  EsigInvalidRequestError,
  EsigInvalidStateError,
  EsigNotFoundError,
  EsigPermissionError,
  EsigRateLimitError,
} from '../src/index.js';
import { errorFromResponse, retryAfterSeconds } from '../src/errors.js';
import { backoffMs, newIdempotencyKey } from '../src/transport.js';

const FAMILY: Record<ErrorCode, typeof EsigError> = {
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

describe('errorFromResponse', () => {
  it('knows every code the server’s problem table has, and maps each to its family with every field', () => {
    expect(Object.keys(FAMILY).sort()).toEqual(Object.keys(PROBLEMS).sort());
    for (const [code, { status, title }] of Object.entries(PROBLEMS)) {
      const body = { type: `urn:esig:problem:${code}`, title, status, detail: `a ${code}`, code, requestId: 'log_1', errors: [{ path: 'title', message: 'must not be empty' }] };
      const e = errorFromResponse(status, new Headers({ 'x-request-id': 'log_1', 'retry-after': '7' }), body);
      expect(e).toBeInstanceOf(FAMILY[code as ErrorCode]);
      expect(e).toBeInstanceOf(EsigError);
      expect(e).toMatchObject({ status, code, detail: `a ${code}`, requestId: 'log_1', title, type: body.type, errors: body.errors });
      expect(e.message).toContain(`a ${code}`);
      if (e instanceof EsigRateLimitError) expect(e.retryAfter).toBe(7);
    }
  });

  it('places a code newer than this client by its status, and a body that is not a problem as an API error', () => {
    expect(errorFromResponse(409, new Headers(), { code: 'newer_conflict', detail: 'x' })).toBeInstanceOf(EsigInvalidStateError);
    expect(errorFromResponse(418, new Headers(), { code: 'teapot', detail: 'x' })).toBeInstanceOf(EsigInvalidRequestError);
    const html = errorFromResponse(502, new Headers({ 'x-request-id': 'log_9' }), '<html>Bad gateway</html>');
    expect(html).toBeInstanceOf(EsigAPIError);
    expect(html).toMatchObject({ status: 502, code: 'unexpected_response', requestId: 'log_9' });
    expect(errorFromResponse(429, new Headers({ 'retry-after': '3' }), '')).toMatchObject({ retryAfter: 3 });
  });
});

describe('retry timing', () => {
  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-11-23T09:00:00Z');
    expect(retryAfterSeconds(new Headers({ 'retry-after': '12' }), now)).toBe(12);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'Mon, 23 Nov 2026 09:00:30 GMT' }), now)).toBe(30);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'Mon, 23 Nov 2026 08:00:00 GMT' }), now)).toBe(0);
    expect(retryAfterSeconds(new Headers({ 'retry-after': 'soon' }), now)).toBeNull();
    expect(retryAfterSeconds(new Headers(), now)).toBeNull();
  });

  it('backs off exponentially from 0.5 s to at most 8 s, jittered between half and all of each step', () => {
    for (const [retry, ceiling] of [[1, 500], [2, 1000], [3, 2000], [4, 4000], [5, 8000], [9, 8000]] as const) {
      expect(backoffMs(retry, () => 0)).toBe(ceiling / 2);
      expect(backoffMs(retry, () => 0.999999)).toBeCloseTo(ceiling, -1);
    }
  });

  it('makes a fresh random idempotency key each time', () => {
    const keys = new Set(Array.from({ length: 1000 }, newIdempotencyKey));
    expect(keys.size).toBe(1000);
    for (const k of keys) expect(k).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
