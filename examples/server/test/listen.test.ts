import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig, startServer } from '../src/index.js';

describe('starting the server', () => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-listen-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails, instead of saying it listens, when its port is taken; and can start once the port is free', async () => {
    const taken = createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    const port = (taken.address() as AddressInfo).port;
    const config = loadConfig({ ESIG_DATABASE_URL: `sqlite:${join(dir, 'esig.db')}`, ESIG_PORT: String(port), ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error' });
    const lines: string[] = [];
    await expect(startServer(config, (l) => lines.push(l))).rejects.toMatchObject({ code: 'EADDRINUSE' });
    expect(lines.filter((l) => l.includes('listening'))).toEqual([]);
    await new Promise<void>((r) => taken.close(() => r()));
    // What the failed start opened (the database) was closed: the same file serves a start on the port now free.
    const running = await startServer(config, () => undefined);
    try {
      expect((await fetch(`${running.url}/healthz`)).status).toBe(200);
    } finally {
      await running.close();
    }
  });
});
