import { mkdtempSync, rmSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
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

  it('closes with a connection open that has sent nothing, and lets a request being answered finish', async () => {
    const config = loadConfig({ ESIG_DATABASE_URL: `sqlite:${join(dir, 'quiet.db')}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'error' });
    const running = await startServer(config, () => undefined);
    const { hostname, port } = new URL(running.url);
    // A connection that sends nothing: Node counts it neither idle nor done, and close() waited for its header timeout.
    const quiet = connect(Number(port), hostname);
    await once(quiet, 'connect');
    // Read, as a client does: the server's end of the connection shows as its close.
    quiet.resume();
    const quietClosed = once(quiet, 'close');
    // A request being answered when close() is called: an upload the server has taken (it said `100 Continue`) and
    // whose body comes only afterwards.
    const slow = connect(Number(port), hostname);
    await once(slow, 'connect');
    let answer = '';
    slow.on('data', (b) => (answer += b.toString('latin1')));
    slow.write(
      `POST /api/v1/documents?name=late.pdf HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${running.bootstrap!.secret}\r\nContent-Type: application/pdf\r\nContent-Length: 8\r\nExpect: 100-continue\r\n\r\n`,
    );
    while (!answer.includes('100 Continue')) await once(slow, 'data');
    const slowClosed = once(slow, 'close');
    const closed = running.close();
    slow.write('%PDF-1.7');
    await Promise.all([quietClosed, closed, slowClosed]);
    // Answered (it is no PDF), and its connection closed after the answer.
    expect(answer).toMatch(/\r\n\r\nHTTP\/1\.1 422 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
  });
});
