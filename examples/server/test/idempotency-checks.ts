import { expect } from 'vitest';
import type { TestServer } from './harness.js';

/**
 * 25 concurrent sends of one request with one Idempotency-Key: exactly one runs (one `request.sent`), every
 * other call is a replay of its answer or `409 idempotency_in_progress`, and a late retry replays. Shared by
 * the SQLite and PostgreSQL runs of the server's idempotency tests, whose transactions run one at a time and
 * side by side.
 */
export const sendsOnceUnderConcurrency = async (s: TestServer, key: string): Promise<void> => {
  const { req } = await s.draftReady();
  const results = await Promise.all(
    Array.from({ length: 25 }, () => s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {}, headers: { 'idempotency-key': key } })),
  );
  const ok = results.filter((r) => r.status === 200);
  const inFlight = results.filter((r) => r.status === 409);
  expect(ok.length + inFlight.length).toBe(25);
  expect(ok.length).toBeGreaterThanOrEqual(1);
  expect(inFlight.every((r) => r.body.code === 'idempotency_in_progress')).toBe(true);
  expect(ok.filter((r) => r.headers.get('idempotency-replayed') === null)).toHaveLength(1);
  expect(new Set(ok.map((r) => r.text)).size).toBe(1);
  const events = (await s.call('GET', '/api/v1/events?type=request.sent&limit=100')).body.data as Array<{ data: Record<string, unknown> }>;
  expect(events.filter((e) => e.data.request_id === req.id)).toHaveLength(1);
  // A late retry replays.
  const late = await s.call('POST', `/api/v1/signature-requests/${req.id}/send`, { body: {}, headers: { 'idempotency-key': key } });
  expect(late.headers.get('idempotency-replayed')).toBe('true');
};
