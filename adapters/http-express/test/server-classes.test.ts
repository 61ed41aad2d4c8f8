import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { listenWithAppClasses, serverClassesFor } from '../src/server-classes.js';

const serve = async (app: express.Express): Promise<{ url: string; server: http.Server }> => {
  const server = await new Promise<http.Server>((resolve) => {
    const s = listenWithAppClasses(app)(0, '127.0.0.1', () => resolve(s));
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
};

describe('serverClassesFor', () => {
  it('makes requests and responses with the app’s prototypes before Express sees them, and Express works on them as before', async () => {
    const app = express();
    app.set('trust proxy', false);
    let arrived: { req: unknown; res: unknown } | null = null as { req: unknown; res: unknown } | null;
    app.post('/echo/:id', express.json(), (req, res) => {
      res.status(201).json({ id: req.params.id, body: req.body, query: req.query, ip: req.ip, host: req.hostname, same: req.app === app && res.app === app });
    });
    const { url, server } = await serve(app);
    // Before Express's own listener: what Node's server made.
    server.prependListener('request', (req, res) => void (arrived = { req: Object.getPrototypeOf(req), res: Object.getPrototypeOf(res) }));
    try {
      const r = await fetch(`${url}/echo/42?x=1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":[1,2]}' });
      expect(r.status).toBe(201);
      expect(r.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await r.json()).toEqual({ id: '42', body: { a: [1, 2] }, query: { x: '1' }, ip: '127.0.0.1', host: '127.0.0.1', same: true });
      // The very objects (not objects alike): `toBe`.
      expect(arrived!.req).toBe(app.request);
      expect(arrived!.res).toBe(app.response);
      const req = Object.create(app.request) as object;
      expect(req instanceof http.IncomingMessage).toBe(true);
      expect(Object.create(app.response) instanceof http.ServerResponse).toBe(true);
      // Express's methods are still behind them.
      expect(typeof (app.request as { get?: unknown }).get).toBe('function');
      expect(typeof (app.response as { json?: unknown }).json).toBe('function');
    } finally {
      server.close();
    }
  });

  it('keeps what the app put on its request and response prototypes, before the classes and after', async () => {
    const app = express();
    // Express's guide overrides `req.ip` this way; an app may add methods to the response likewise.
    Object.defineProperty(app.request, 'ip', { configurable: true, get(this: express.Request) { return this.get('x-client-ip') ?? 'socket'; } });
    (app.response as unknown as { problem: () => void }).problem = function (this: express.Response) {
      this.status(418).json({ problem: true });
    };
    const first = serverClassesFor(app);
    (app.request as unknown as { tenant: string }).tenant = 'added after';
    app.get('/ip', (req, res) => void res.json({ ip: req.ip, tenant: (req as unknown as { tenant: string }).tenant }));
    app.get('/problem', (_req, res) => (res as unknown as { problem: () => void }).problem());
    const { url, server } = await serve(app);
    try {
      expect(serverClassesFor(app)).toBe(first);
      expect(await (await fetch(`${url}/ip`, { headers: { 'x-client-ip': '6.6.6.6' } })).json()).toEqual({ ip: '6.6.6.6', tenant: 'added after' });
      const p = await fetch(`${url}/problem`);
      expect([p.status, await p.json()]).toEqual([418, { problem: true }]);
    } finally {
      server.close();
    }
  });

  it('makes one pair of classes per app: a second call changes nothing', () => {
    const app = express();
    const first = serverClassesFor(app);
    const request = app.request;
    expect(serverClassesFor(app)).toBe(first);
    expect(app.request).toBe(request);
    expect(first.IncomingMessage.prototype).toBe(app.request);
    // Named as Node's own, for logs.
    expect([first.IncomingMessage.name, first.ServerResponse.name]).toEqual(['IncomingMessage', 'ServerResponse']);
  });

  it('calls a listen callback once, with the error, when the listen fails', async () => {
    const app = express();
    const { server: taken } = await serve(app);
    try {
      const port = (taken.address() as AddressInfo).port;
      const calls: unknown[] = [];
      await new Promise<void>((resolve) => {
        listenWithAppClasses(express())(port, '127.0.0.1', (e?: Error) => {
          calls.push(e);
          setTimeout(resolve, 50);
        });
      });
      expect(calls).toHaveLength(1);
      expect((calls[0] as NodeJS.ErrnoException).code).toBe('EADDRINUSE');
    } finally {
      taken.close();
    }
  });

  it('serves HTTPS too: the classes are options any Node server takes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'esig-classes-'));
    const [keyFile, certFile] = [join(dir, 'key.pem'), join(dir, 'cert.pem')];
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    const app = express();
    let made: unknown = null;
    app.get('/hello', (req, res) => void res.json({ hello: req.query.name }));
    const server = https.createServer({ ...serverClassesFor(app), key: readFileSync(keyFile), cert: readFileSync(certFile) }, app);
    server.prependListener('request', (req) => void (made = Object.getPrototypeOf(req)));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get({ host: '127.0.0.1', port: (server.address() as AddressInfo).port, path: '/hello?name=ada', ca: readFileSync(certFile) }, (res) => {
            let text = '';
            res.on('data', (d) => (text += d));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      expect(JSON.parse(body)).toEqual({ hello: 'ada' });
      expect(made).toBe(app.request);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  // The reason for the classes, at the level it happens: V8 caches no hidden-class transition from an object whose
  // prototype was changed after it was made, so with Express's `setPrototypeOf` each request ends with hidden
  // classes of its own and every property cache on the way misses (docs/performance.md, twenty-fifth round).
  it('leaves two requests, and two responses, with one hidden class', () => {
    const fixture = new URL('./fixtures/hidden-classes.ts', import.meta.url).pathname;
    const r = spawnSync(process.execPath, ['--allow-natives-syntax', '--conditions=@esig/source', '--import', 'tsx', fixture], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    expect(JSON.parse(r.stdout)).toEqual({ requests: true, responses: true });
  });
});
