import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import type { TestServer } from './harness.js';
import { startTestServer } from './harness.js';
import { createTestDatabase, postgresAvailable } from './pg.js';

/**
 * Job pickup is event-driven: a request that enqueues a job wakes the in-process worker when its transaction
 * commits. The poll interval here is an hour, far beyond the test's timeout, so every job below can only
 * have run because a commit woke the worker. No timing is asserted: only that the work happens at all.
 */
const AN_HOUR = String(60 * 60 * 1000);

const until = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** Send (mail.invite jobs) → the invitation in the test mailbox → sign (a seal job) → the finished PDF. */
const used = new Set<string>();
const sendSignAndDownload = async (s: TestServer) => {
  const { req, rcp } = await s.draftReady();
  expect((await s.call('POST', `/api/v1/signature-requests/${req.id}/send`)).status).toBe(200);
  // The same address gets every round's invitation: the new one is the link not used before.
  const token = await until(async () =>
    ((await s.call('GET', `/api/v1/test-mailbox?to=${encodeURIComponent(rcp.email)}&limit=10`)).body.data as Array<{ subject: string; text: string }>)
      .filter((m) => /Please sign/.test(m.subject))
      .map((m) => /\/sign\/([A-Za-z0-9]{43,})/.exec(m.text)?.[1])
      .find((t) => t !== undefined && !used.has(t)),
  );
  used.add(token);
  const signed = await s.call('POST', `/api/v1/signing/${token}/sign`, { key: null, body: { values: {}, signature: { kind: 'typed', value: 'Ada Lovelace' } } });
  expect(signed.status, signed.text).toBe(200);
  expect([signed.body.request.status, signed.body.everyoneSigned]).toEqual(['SENT', true]);
  const finished = await until(async () => {
    const r = await fetch(`${s.url}/api/v1/signature-requests/${req.id}/document`, { headers: { authorization: `Bearer ${s.key}` } });
    return r.status === 200 ? new Uint8Array(await r.arrayBuffer()) : (await r.body?.cancel(), undefined);
  });
  expect(Buffer.from(finished.subarray(0, 5)).toString()).toBe('%PDF-');
};

describe('job pickup without polling (SQLite, in-process worker)', () => {
  let s: TestServer;
  afterAll(async () => s?.close());

  it('runs the jobs a request enqueued although the next poll is an hour away', async () => {
    s = await startTestServer({ ESIG_WORKER_POLL_MS: AN_HOUR, ESIG_PUBLIC_URL: 'http://esig.test' });
    await sendSignAndDownload(s);
    // Twice: the worker went back to its hour-long sleep in between, and was woken again.
    await sendSignAndDownload(s);
  });
});

const available = await postgresAvailable('the PostgreSQL job wake-up test');

describe.skipIf(!available)('job pickup without polling (PostgreSQL, in-process worker)', () => {
  let s: TestServer;
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  afterAll(async () => {
    await s?.close();
    await db?.drop();
  });

  it('runs the jobs a request enqueued although the next poll is an hour away', async () => {
    db = await createTestDatabase('esig_wakeup');
    s = await startTestServer({
      ESIG_DATABASE_URL: db.url,
      ESIG_MASTER_KEY: randomBytes(32).toString('hex'),
      ESIG_WORKER_POLL_MS: AN_HOUR,
      ESIG_PUBLIC_URL: 'http://esig.test',
    });
    await sendSignAndDownload(s);
    await sendSignAndDownload(s);
  });
});
