import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import type { McpCall } from '../src/answer.js';
import { McpThreadStopped, createMcpThreads } from '../src/threads.js';

const entry = { filename: new URL('./fixtures/echo-thread.mjs', import.meta.url).href };
const call = (method: string, bytes = 3): McpCall => ({ method, url: 'http://127.0.0.1/mcp', headers: [], body: new Uint8Array(bytes), token: 't', apiBaseUrl: 'http://127.0.0.1:9', version: '0' });
const answered = (a: { body: Uint8Array }) => JSON.parse(new TextDecoder().decode(a.body)) as { method: string; bytes: number; pongs: number };
const decoded = (a: { body: Uint8Array }) => {
  const { method, bytes } = answered(a);
  return { method, bytes };
};

describe('the tool server’s threads', () => {
  it('answer calls on a thread; a body’s bytes move to the thread, not copied', async () => {
    const threads = createMcpThreads(entry, { threads: 1 });
    try {
      const c = call('POST', 1_000_000);
      const a = await threads.answer(c);
      expect(a.status).toBe(200);
      expect(decoded(a)).toEqual({ method: 'POST', bytes: 1_000_000 });
      // Transferred: the caller's buffer is detached.
      expect(c.body.byteLength).toBe(0);
      // A view into a larger buffer (a pooled Buffer) is copied rather than detaching what it shares.
      const shared = new Uint8Array(64);
      const view = shared.subarray(8, 16);
      expect(decoded(await threads.answer({ ...call('POST'), body: view }))).toEqual({ method: 'POST', bytes: 8 });
      expect(shared.byteLength).toBe(64);
    } finally {
      await threads.close();
    }
  });

  it('a thread that stops fails its own calls only, with McpThreadStopped, and the next call gets a new thread', async () => {
    const threads = createMcpThreads(entry, { threads: 2 });
    try {
      // One thread holds a call and will exit; the other holds one that must survive it.
      const held = threads.answer(call('HOLD'));
      const other = threads.answer(call('HOLD'));
      // The EXIT goes to the thread with the fewest calls in hand: both have one, so the first.
      const exit = threads.answer(call('EXIT'));
      await expect(exit).rejects.toBeInstanceOf(McpThreadStopped);
      await expect(held).rejects.toBeInstanceOf(McpThreadStopped);
      // The next call goes to the slot left without a thread (no calls in hand), which starts a new one.
      expect(decoded(await threads.answer(call('AFTER')))).toEqual({ method: 'AFTER', bytes: 3 });
      let otherSettled = false;
      void other.finally(() => (otherSettled = true)).catch(() => undefined);
      await new Promise((ok) => setImmediate(ok));
      expect(otherSettled).toBe(false);
      await threads.close();
      await expect(other).rejects.toBeInstanceOf(McpThreadStopped);
    } finally {
      await threads.close();
    }
  });

  it('a thread stuck with calls in hand (an event loop that never turns) is stopped: its calls fail, the next call gets a new thread', async () => {
    const threads = createMcpThreads(entry, { threads: 1, stuckAfterMs: 2_000 });
    try {
      const held = threads.answer(call('HOLD'));
      const spun = threads.answer(call('SPIN'));
      await expect(spun).rejects.toThrow(McpThreadStopped);
      await expect(spun).rejects.toThrow(/thread answered nothing for 2 s, and was stopped/);
      await expect(held).rejects.toBeInstanceOf(McpThreadStopped);
      expect(decoded(await threads.answer(call('AFTER')))).toEqual({ method: 'AFTER', bytes: 3 });
    } finally {
      await threads.close();
    }
  });

  it('a thread found stuck is let go at once: its calls fail then, and the next call gets a new thread, however long it takes to stop', async () => {
    const threads = createMcpThreads(entry, { threads: 1, stuckAfterMs: 2_000 });
    // Blocked in a system call (which terminating the thread does not interrupt) until the gate opens.
    const gate = join(mkdtempSync(join(tmpdir(), 'esig-mcp-gate-')), 'open');
    // Opened however the test ends: on a timeout its own finally never runs (it waits on the blocked call).
    onTestFinished(() => writeFileSync(gate, ''));
    try {
      const blocked = threads.answer({ ...call('BLOCK'), version: gate });
      // Failed when found stuck, while its thread is still blocked: a pool that waited for the thread to stop would
      // leave it waiting until the gate opens, below.
      await expect(blocked).rejects.toThrow(/answered nothing for 2 s, and was stopped/);
      // The next call is not given to the thread let go, still blocked: a new thread answers it.
      expect(decoded(await threads.answer(call('AFTER')))).toEqual({ method: 'AFTER', bytes: 3 });
    } finally {
      writeFileSync(gate, '');
      await threads.close();
    }
  });

  it('a thread that has calls in hand and answers its pings is left alone, however long its calls wait', async () => {
    const threads = createMcpThreads(entry, { threads: 1, stuckAfterMs: 2_000 });
    try {
      const held = threads.answer(call('HOLD'));
      let settled = false;
      void held.finally(() => (settled = true)).catch(() => undefined);
      // Nothing but pongs comes from the thread meanwhile: a pool that did not hear them would stop it after 2 s.
      await new Promise((ok) => setTimeout(ok, 5_000));
      expect(settled).toBe(false);
      expect(answered(await threads.answer(call('PINGS'))).pongs).toBeGreaterThanOrEqual(3);
      expect(settled).toBe(false);
    } finally {
      await threads.close();
    }
  });

  it('a healthy thread is not stopped because the pool’s own event loop was held up, or the clock stepped forward', async () => {
    const threads = createMcpThreads(entry, { threads: 1, stuckAfterMs: 2_000 });
    try {
      const held = threads.answer(call('HOLD'));
      let settled = false;
      void held.finally(() => (settled = true)).catch(() => undefined);
      // The thread runs and answers: no ping of the pool's is left unanswered.
      await threads.answer(call('READY'));
      // The pool's own event loop is held for three times the bound (a long synchronous stretch of the API's, a
      // pause of the whole process): the thread, meanwhile, was never asked anything it did not answer.
      const until = performance.now() + 6_000;
      while (performance.now() < until);
      // A few of the pool's checks go by.
      await new Promise((ok) => setTimeout(ok, 3_000));
      expect(settled).toBe(false);
      // Then the wall clock steps forward by a minute (NTP, a VM resumed): no time passed for the thread.
      vi.useFakeTimers({ toFake: ['Date'], now: Date.now() + 60_000 });
      try {
        await new Promise((ok) => setTimeout(ok, 3_000));
        expect(settled).toBe(false);
      } finally {
        vi.useRealTimers();
      }
      // The same thread still answers (a new one would have had to fail `held`).
      expect(decoded(await threads.answer(call('AFTER')))).toEqual({ method: 'AFTER', bytes: 3 });
      expect(settled).toBe(false);
    } finally {
      await threads.close();
    }
  });

  it('refuses calls once closed, and a thread count that is not a positive integer', async () => {
    const threads = createMcpThreads(entry, { threads: 1 });
    await threads.close();
    await expect(threads.answer(call('POST'))).rejects.toBeInstanceOf(McpThreadStopped);
    expect(() => createMcpThreads(entry, { threads: 0 })).toThrow(/threads must be an integer ≥ 1/);
    expect(() => createMcpThreads(entry, { threads: 1.5 })).toThrow(/threads must be an integer ≥ 1/);
    // A bound setInterval cannot hold would ping every millisecond.
    for (const stuckAfterMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, 7e9]) expect(() => createMcpThreads(entry, { threads: 1, stuckAfterMs })).toThrow(/stuckAfterMs must be positive/);
  });
});

describe('a call that cannot be sent', () => {
  it('fails at once and leaves nothing waiting: a body whose buffer was transferred already', async () => {
    const threads = createMcpThreads(entry, { threads: 1 });
    try {
      const c = call('POST', 1_000_000);
      await threads.answer(c);
      // Its buffer went to the thread with the first call: sending it again cannot be done.
      await expect(threads.answer(c)).rejects.toThrow();
      // The slot holds no call of it: the next one goes to the same thread and is answered.
      expect(decoded(await threads.answer(call('NEXT')))).toEqual({ method: 'NEXT', bytes: 3 });
      // An empty body is sent as it is (nothing to move).
      expect(decoded(await threads.answer(call('EMPTY', 0)))).toEqual({ method: 'EMPTY', bytes: 0 });
    } finally {
      await threads.close();
    }
  });
});
