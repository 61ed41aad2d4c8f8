import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { request } from 'node:http';
import express from 'express';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EsigHttpDeps } from '../src/deps.js';
import type { TableRoute } from '../src/dispatch.js';
import { compileRouteTable } from '../src/dispatch.js';
import { SIGNING_BASE, toExpressPath } from '../src/route.js';
import { buildRoutes } from '../src/routes.js';

// The API's own routes (their handlers are never called here: the table is built from methods and paths).
const apiShapes = buildRoutes({} as EsigHttpDeps, { publicUrl: 'http://esig.test', embedSessionTtlS: 300 }).map((r) => ({ method: r.method, path: r.path }));
// Shapes where order and case decide: a parameter before a literal at the same place, and the other way round.
const trickyShapes: ReadonlyArray<Pick<TableRoute, 'method' | 'path'>> = [
  { method: 'get', path: '/t/{a}/x' },
  { method: 'get', path: '/t/lit/x' },
  { method: 'get', path: '/t/Other/{b}' },
  { method: 'get', path: '/t/{c}/{d}' },
  { method: 'post', path: '/t/Other/{b}' },
  { method: 'delete', path: '/t/{a}' },
];
const shapes = [...apiShapes, ...trickyShapes];

/** How many times a route's first handler ran, on the server without the table and on the one with it. */
const runs = [0, 0];

/**
 * One server where Express routes everything, another where the table goes first. A route's handler says
 * which route it is and the parameters it saw; a header says whether the table or Express found it.
 */
const answering = (withTable: boolean) => {
  const app = express();
  const routes: TableRoute[] = shapes.map((s, i) => ({
    ...s,
    handlers: [
      (_req: Request, _res: Response, next: NextFunction) => (runs[withTable ? 1 : 0]++, next()),
      (req: Request, res: Response) => void res.set('x-via', res.locals.via ?? 'express').json({ route: i, params: { ...req.params } }),
    ],
  }));
  if (withTable) {
    const table = compileRouteTable(routes);
    app.use((req, res, next) => {
      res.locals.via = table.match(req.method, req.url) === null ? undefined : 'table';
      table.middleware(req, res, next);
    });
  }
  for (const r of routes) app[r.method](toExpressPath(r.path), ...r.handlers);
  return app;
};

const servers: Server[] = [];
let plain = '';
let tabled = '';
beforeAll(async () => {
  for (const withTable of [false, true]) {
    const server = answering(withTable).listen(0, '127.0.0.1');
    await once(server, 'listening');
    servers.push(server);
    const url = `127.0.0.1:${(server.address() as AddressInfo).port}`;
    if (withTable) tabled = url;
    else plain = url;
  }
});
afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

/** A raw request (the path exactly as given, no URL normalisation on the way): its status and body. */
const ask = (host: string, method: string, path: string) =>
  new Promise<{ answer: string; via: string | undefined }>((resolve, reject) => {
    const [hostname, port] = host.split(':');
    const req = request({ hostname, port: Number(port), method, path, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ answer: `${res.statusCode} ${body}`, via: res.headers['x-via'] as string | undefined }));
    });
    req.on('error', reject);
    req.end();
  });

const literals = [...new Set(shapes.flatMap((s) => s.path.split('/').filter((x) => x !== '' && !x.startsWith('{'))))];
const caseOf = (s: string, flips: readonly boolean[]) => [...s].map((ch, i) => (flips[i % flips.length] ? ch.toUpperCase() : ch)).join('');
const segment = fc.oneof(
  fc.tuple(fc.constantFrom(...literals), fc.array(fc.boolean(), { minLength: 1, maxLength: 4 })).map(([l, flips]) => caseOf(l, flips)),
  fc.constantFrom(...literals),
  fc.stringMatching(/^(req|doc|rcp|whe|key)_[0-9A-Z]{4,10}$/),
  fc.constantFrom('', '%41bc', 'a%2Fb', 'a.b', '~x', 'x;y', 'signing', 'openapi.json', 'healthz', 'a b', 'é'),
);
const method = fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'PUT');
const tail = fc.tuple(fc.oneof({ arbitrary: fc.constant(false), weight: 4 }, fc.constant(true)), fc.constantFrom('', '', '?a=1', '?x=%2F&y', '#h'));
const toPath = (segs: readonly string[], [slash, rest]: [boolean, string]) => `/${segs.map(encodeURI).join('/')}${slash ? '/' : ''}${rest}`;
// A route's own method and path, its parameters filled in (and now and then its literals changed)...
const routeCall = fc.constantFrom(...shapes).chain((s) =>
  fc.tuple(
    fc.oneof({ arbitrary: fc.constant(s.method.toUpperCase()), weight: 4 }, method),
    fc.tuple(...s.path.slice(1).split('/').map((part) => (part.startsWith('{') ? segment : fc.oneof({ arbitrary: fc.constant(part), weight: 12 }, segment)))),
    tail,
  ).map(([m, segs, t]) => [m, toPath(segs, t)] as const),
);
// ...or any method and segments at all.
const anyCall = fc.tuple(method, fc.array(segment, { minLength: 1, maxLength: 7 }), tail).map(([m, segs, t]) => [m, toPath(segs, t)] as const);
const call = fc.oneof({ arbitrary: routeCall, weight: 3 }, anyCall);

describe('the route table', () => {
  it('answers only where Express picks the same route with the same parameters, and declines the rest', async () => {
    let viaTable = 0;
    await fc.assert(
      fc.asyncProperty(call, async ([m, p]) => {
        const before = [...runs];
        const [expected, got] = await Promise.all([ask(plain, m, p), ask(tabled, m, p)]);
        expect(got.answer).toEqual(expected.answer);
        // A route run twice would answer once (the second answer finds the first sent): counted instead.
        expect(runs[1]! - before[1]!).toBe(runs[0]! - before[0]!);
        if (got.via === 'table') viaTable++;
      }),
      { numRuns: 400 },
    );
    // The property says nothing if the table never answers: it must, for a good share of what it is asked
    // (about 110 of the 400 calls, as generated; 50 leaves room for chance).
    expect(viaTable).toBeGreaterThan(50);
  });

  it('finds every API route with its parameters, and nothing that an earlier layer of the app answers', () => {
    const table = compileRouteTable(apiShapes.map((s) => ({ ...s, handlers: [] })));
    for (const s of apiShapes) {
      const names = [...s.path.matchAll(/\{(\w+)\}/g)].map((x) => x[1]!);
      const url = s.path.replace(/\{(\w+)\}/g, (_, n: string) => `${n}_01AB`);
      const found = table.match(s.method.toUpperCase(), `${url}?limit=2`);
      expect(found?.route.path).toBe(s.path);
      expect(found?.params).toEqual(Object.fromEntries(names.map((n) => [n, `${n}_01AB`])));
    }
    for (const [m, url] of [
      ['GET', '/healthz'],
      ['GET', '/readyz'],
      ['GET', '/api/v1/openapi.json'],
      ['GET', `${SIGNING_BASE}/tok_abc`],
      ['POST', `${SIGNING_BASE}/tok_abc/sign`],
      ['GET', `${SIGNING_BASE}/tok_abc/documents/doc_1`],
      ['POST', '/oauth/token'],
      ['GET', '/.well-known/oauth-authorization-server'],
      ['POST', '/mcp'],
      ['GET', '/sign/tok_abc'],
      ['GET', '/embed/tok_abc'],
    ] as const)
      expect(table.match(m, url)).toBeNull();
  });
});

describe('a route run by the table', () => {
  /** An app whose only route runs `handlers` through the table, with Express's error handler after it. */
  const run = async (handlers: RequestHandler[]) => {
    const app = express();
    const table = compileRouteTable([{ method: 'get', path: '/r', handlers }]);
    app.use(table.middleware);
    app.get('/r', (_req, res) => void res.status(418).end('express ran the route again'));
    app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => void res.status(500).end(err instanceof Error ? err.message : String(err)));
    const server = app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    try {
      const r = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/r`);
      return { status: r.status, body: await r.text() };
    } finally {
      await new Promise((r) => server.close(r));
    }
  };

  it('runs the handlers in order, each on the one before calling next()', async () => {
    const seen: number[] = [];
    const r = await run([
      (_q, _s, next) => (seen.push(1), next()),
      (_q, _s, next) => void setImmediate(() => (seen.push(2), next())),
      (_q, res) => (seen.push(3), void res.status(200).end('ok')),
    ]);
    expect(r).toEqual({ status: 200, body: 'ok' });
    expect(seen).toEqual([1, 2, 3]);
  });

  it('takes next(err), a throw and a rejected promise to the error handlers, and skips the handlers left', async () => {
    const never: RequestHandler = (_q, res) => void res.status(200).end('should not run');
    expect(await run([(_q, _s, next) => next(new Error('passed')), never])).toEqual({ status: 500, body: 'passed' });
    expect(await run([async () => Promise.reject(0), never])).toEqual({ status: 500, body: 'Rejected promise' });
    expect(
      await run([
        () => {
          throw new Error('thrown');
        },
        never,
      ]),
    ).toEqual({ status: 500, body: 'thrown' });
    expect(await run([async () => Promise.reject(new Error('rejected')), never])).toEqual({ status: 500, body: 'rejected' });
  });

  it('takes a falsy next() or throw, as Express does, for no error', async () => {
    const answer: RequestHandler = (_q, res) => void res.status(200).end('ok');
    for (const falsy of [null, false, 0, '']) {
      expect(await run([(_q, _s, next) => next(falsy), answer])).toEqual({ status: 200, body: 'ok' });
      expect(
        await run([
          () => {
            throw falsy;
          },
          answer,
        ]),
      ).toEqual({ status: 200, body: 'ok' });
    }
  });

  it("answers what would leave the route for Express's layers after it as a bug, rather than running the route again", async () => {
    let first = 0;
    const count: RequestHandler = (_q, _s, next) => (first++, next());
    const lastCallsNext = await run([count, (_q, _s, next) => next()]);
    expect(lastCallsNext.status).toBe(500);
    expect(lastCallsNext.body).toMatch(/last handler of GET \/r called next\(\)/);
    for (const leave of ['route', 'router']) {
      const r = await run([count, (_q, _s, next) => next(leave)]);
      expect(r.status).toBe(500);
      expect(r.body).toContain(`next('${leave}')`);
    }
    expect(first).toBe(3);
  });
});
