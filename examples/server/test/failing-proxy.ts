import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * What the proxy does with one request:
 * - `forward`: pass it to the server and its answer back;
 * - `status`: answer itself with this status and body, never reaching the server;
 * - `drop-before`: close the connection without reaching the server;
 * - `drop-after`: pass it to the server, wait for the whole answer, then close the connection instead of
 *   relaying it — the server did the work, the client saw a network error.
 */
export type ProxyAction =
  | { readonly kind: 'forward' }
  | { readonly kind: 'status'; readonly status: number; readonly body: string; readonly headers?: Record<string, string> }
  | { readonly kind: 'drop-before' }
  | { readonly kind: 'drop-after' };

export interface ProxiedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly action: ProxyAction['kind'];
  /** The server's answer, when the request reached it. */
  readonly upstream?: { readonly status: number; readonly headers: IncomingHttpHeaders; readonly body: string };
}

/** A real HTTP proxy on loopback in front of `target`, that fails requests as told (the rest are forwarded). */
export const startFailingProxy = async (target: string) => {
  const upstream = new URL(target);
  const log: ProxiedRequest[] = [];
  let plan: Array<(method: string, path: string) => ProxyAction | undefined> = [];

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      // The first rule that has something to say about this request decides, and is used up.
      let action: ProxyAction = { kind: 'forward' };
      for (let i = 0; i < plan.length; i++) {
        const a = plan[i]!(method, path);
        if (a) {
          action = a;
          plan = [...plan.slice(0, i), ...plan.slice(i + 1)];
          break;
        }
      }
      const entry = { method, path, headers: req.headers, action: action.kind };
      if (action.kind === 'status') {
        log.push(entry);
        res.writeHead(action.status, { 'content-type': 'text/plain', ...(action.headers ?? {}) });
        return void res.end(action.body);
      }
      if (action.kind === 'drop-before') {
        log.push(entry);
        return void req.socket.destroy();
      }
      const out = request(
        { host: upstream.hostname, port: upstream.port, method, path, headers: { ...req.headers, host: upstream.host } },
        (up) => {
          const body: Buffer[] = [];
          up.on('data', (c: Buffer) => body.push(c));
          up.on('end', () => {
            const raw = Buffer.concat(body);
            log.push({ ...entry, upstream: { status: up.statusCode ?? 0, headers: up.headers, body: raw.toString('utf8') } });
            if (action.kind === 'drop-after') return void req.socket.destroy();
            res.writeHead(up.statusCode ?? 502, up.headers);
            res.end(raw);
          });
        },
      );
      out.on('error', () => req.socket.destroy());
      out.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;

  return {
    url: `http://127.0.0.1:${port}`,
    log,
    /** Fails the next request that `when` picks with `action`; each rule is used once. */
    failNext(when: (method: string, path: string) => boolean, action: ProxyAction) {
      plan.push((m, p) => (when(m, p) ? action : undefined));
    },
    reset() {
      log.length = 0;
      plan = [];
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

export type FailingProxy = Awaited<ReturnType<typeof startFailingProxy>>;
