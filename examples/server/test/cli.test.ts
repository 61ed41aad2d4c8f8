import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const BIN = new URL('../bin/esig.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'esig-cli-'));
const env = { ...process.env, ESIG_DATABASE_URL: `sqlite:${join(dir, 'db', 'esig.db')}`, ESIG_PORT: '0', ESIG_HOST: '127.0.0.1', ESIG_LOG_LEVEL: 'info' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts `esig serve`, waits for the listening line, and collects what it printed. */
const serve = async () => {
  const child = spawn(process.execPath, [BIN, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`esig serve did not start:\n${out}`)), 20_000);
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /esig: listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => reject(new Error(`esig serve exited with ${code}:\n${out}`)));
  });
  const stop = async () => {
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGTERM');
    return exited;
  };
  return { port, output: () => out, stop };
};

describe('the esig CLI', () => {
  it('serve prints a test key on first start only, and the key works', async () => {
    const first = await serve();
    const key = /(esig_test_[A-Za-z0-9]{32})/.exec(first.output())?.[1];
    expect(key, first.output()).toBeDefined();
    const res = await fetch(`http://127.0.0.1:${first.port}/api/v1/documents`, { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    expect(await first.stop()).toBe(0);
    // The master key was generated beside the database, readable by the owner only.
    expect(statSync(join(dir, 'db', 'master.key')).mode & 0o077).toBe(0);

    const second = await serve();
    expect(second.output()).not.toMatch(/esig_test_[A-Za-z0-9]{32}/);
    const again = await fetch(`http://127.0.0.1:${second.port}/api/v1/documents`, { headers: { authorization: `Bearer ${key}` } });
    expect(again.status).toBe(200);
    await second.stop();
  }, 60_000);

  it('serve on a port already taken exits 1 with one line that says so, not a stack', async () => {
    const running = await serve();
    try {
      const r = spawnSync(process.execPath, [BIN, 'serve'], { env: { ...env, ESIG_PORT: String(running.port) }, encoding: 'utf8', timeout: 60_000 });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.trim().split('\n')).toEqual([
        `esig: listen EADDRINUSE: address already in use 127.0.0.1:${running.port} (another process listens there: stop it, or choose another port with ESIG_PORT)`,
      ]);
    } finally {
      await running.stop();
    }
  }, 90_000);

  it('keys create prints a secret once that authenticates in its mode', async () => {
    const r = spawnSync(process.execPath, [BIN, 'keys', 'create', '--org', 'acme', '--mode', 'live', '--scopes', 'documents:read,signature_requests:read', '--name', 'reporting'], { env, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    const created = JSON.parse(r.stdout);
    expect(created).toMatchObject({ org: 'acme', mode: 'live', scopes: ['documents:read', 'signature_requests:read'] });
    expect(created.secret).toMatch(/^esig_live_/);
    const running = await serve();
    const ok = await fetch(`http://127.0.0.1:${running.port}/api/v1/documents`, { headers: { authorization: `Bearer ${created.secret}` } });
    expect(ok.status).toBe(200);
    const denied = await fetch(`http://127.0.0.1:${running.port}/api/v1/api-keys`, { headers: { authorization: `Bearer ${created.secret}` } });
    expect(denied.status).toBe(403);
    await running.stop();
  }, 60_000);

  it('migrate reports what it applied, and bad input exits non-zero with a message', () => {
    const m = spawnSync(process.execPath, [BIN, 'migrate'], { env, encoding: 'utf8' });
    expect(m.status, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/0 migration\(s\) applied/);
    const fresh = spawnSync(process.execPath, [BIN, "migrate"], { env: { ...env, ESIG_DATABASE_URL: `sqlite:${join(dir, "fresh.db")}` }, encoding: "utf8" });
    expect(fresh.stdout).toMatch(/^esig: [1-9]\d* migration\(s\) applied/);
    const bad = spawnSync(process.execPath, [BIN, 'keys', 'create', '--org', 'x', '--mode', 'prod', '--scopes', '*'], { env, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--mode must be test or live/);
    const badEnv = spawnSync(process.execPath, [BIN, 'serve'], { env: { ...env, ESIG_PORT: 'eighty' }, encoding: 'utf8' });
    expect(badEnv.status).toBe(2);
    expect(badEnv.stderr).toMatch(/ESIG_PORT/);
    // An unknown option is named, with the usage, and no stack trace.
    const unknown = spawnSync(process.execPath, [BIN, 'keys', 'create', '--org', 'x', '--bogus'], { env, encoding: 'utf8' });
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--bogus'/);
    expect(unknown.stderr).toMatch(/Usage:/);
    expect(unknown.stderr).not.toMatch(/ at /);
    const help = spawnSync(process.execPath, [BIN, 'keys', 'create', '--help'], { env, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/esig keys create --org/);
  }, 60_000);
});
