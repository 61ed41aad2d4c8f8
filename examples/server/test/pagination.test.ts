import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness';
import { startTestServer } from './harness';

let s: TestServer;
let key: string;
const ids: string[] = [];
beforeAll(async () => {
  s = await startTestServer();
  key = await s.newKey('pager', 'test');
  for (let i = 0; i < 23; i++) ids.push((await s.uploadPdf(`p${i}.pdf`, 1, key)).id);
});
afterAll(async () => s.close());

const page = (q: string) => s.call('GET', `/api/v1/documents?${q}`, { key });

const walk = async (limit: number, order: 'asc' | 'desc') => {
  const seen: string[] = [];
  let cursor: string | null = null;
  for (let guard = 0; guard < 100; guard++) {
    const r = await page(`limit=${limit}&order=${order}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['data', 'pageInfo']);
    expect(Object.keys(r.body.pageInfo).sort()).toEqual(['hasMore', 'limit', 'nextCursor', 'order']);
    expect(r.body.pageInfo).toMatchObject({ limit, order });
    expect(r.body.data.length).toBeLessThanOrEqual(limit);
    seen.push(...r.body.data.map((d: { id: string }) => d.id));
    cursor = r.body.pageInfo.nextCursor;
    expect(r.body.pageInfo.hasMore).toBe(cursor !== null);
    if (cursor === null) return seen;
  }
  throw new Error('pagination did not end');
};

describe('cursor pagination', () => {
  it.each([1, 2, 5, 22, 23, 24, 100])('visits every row exactly once with limit %i, both orders', async (limit) => {
    expect(await walk(limit, 'asc')).toEqual(ids);
    expect(await walk(limit, 'desc')).toEqual([...ids].reverse());
  });

  it('defaults to 25, newest first', async () => {
    const r = await page('');
    expect(r.body.pageInfo).toMatchObject({ limit: 25, order: 'desc', hasMore: false, nextCursor: null });
    expect(r.body.data[0].id).toBe(ids[ids.length - 1]);
  });

  it.each(['0', '101', '-1', '1.5', 'ten', '', '1e2'])('rejects limit=%s instead of clamping', async (limit) => {
    const r = await page(`limit=${limit}`);
    expect(r.status).toBe(400);
    expect(r.body.code).toBe('validation_failed');
    expect(r.body.errors[0].path).toBe('limit');
  });

  it('returns the same page for the same cursor, and inserts between fetches neither skip nor repeat', async () => {
    const k = await s.newKey('pager2', 'test');
    const mine: string[] = [];
    for (let i = 0; i < 6; i++) mine.push((await s.uploadPdf(`q${i}.pdf`, 1, k)).id);
    const first = await s.call('GET', '/api/v1/documents?limit=2', { key: k });
    const cursor = encodeURIComponent(first.body.pageInfo.nextCursor);
    const a = await s.call('GET', `/api/v1/documents?limit=2&cursor=${cursor}`, { key: k });
    const newer = await s.uploadPdf('newer.pdf', 1, k);
    const b = await s.call('GET', `/api/v1/documents?limit=2&cursor=${cursor}`, { key: k });
    expect(b.text).toBe(a.text);
    const rest = await s.call('GET', `/api/v1/documents?limit=100&cursor=${encodeURIComponent(b.body.pageInfo.nextCursor)}`, { key: k });
    const all = [...first.body.data, ...b.body.data, ...rest.body.data].map((d: { id: string }) => d.id);
    expect(all).toEqual([...mine].reverse());
    expect(all).not.toContain(newer.id);
    // Ascending: the new row appears at the end, once.
    const asc = await s.call('GET', '/api/v1/documents?limit=100&order=asc', { key: k });
    expect(asc.body.data.map((d: { id: string }) => d.id)).toEqual([...mine, newer.id]);
  });

  it('accepts a cursor only for the list, order and filter it came from, and refuses tampering', async () => {
    const first = await page('limit=2');
    const cursor = first.body.pageInfo.nextCursor as string;
    const enc = encodeURIComponent(cursor);
    expect((await page(`limit=2&cursor=${enc}`)).status).toBe(200);
    expect((await page(`limit=5&cursor=${enc}`)).status).toBe(200);
    for (const q of [`order=asc&cursor=${enc}`, `status=UPLOADED&cursor=${enc}`]) {
      const r = await page(q);
      expect(r.status).toBe(400);
      expect(r.body.errors[0].path).toBe('cursor');
    }
    expect((await s.call('GET', `/api/v1/signature-requests?cursor=${enc}`, { key })).status).toBe(400);
    expect((await s.call('GET', `/api/v1/events?cursor=${enc}`, { key })).status).toBe(400);
    const [body, mac] = cursor.split('.');
    const flipped = body!.slice(0, -1) + (body!.endsWith('A') ? 'B' : 'A');
    // A changed last character: replacing it with a fixed '0' changed nothing whenever the MAC ended in 0.
    const badMac = mac!.slice(0, -1) + (mac!.endsWith('0') ? '1' : '0');
    for (const bad of [`${flipped}.${mac}`, `${body}.${badMac}`, 'garbage', `${body}.`]) {
      const r = await page(`cursor=${encodeURIComponent(bad)}`);
      expect(r.status).toBe(400);
      expect(r.body.code).toBe('validation_failed');
    }
  });
});
