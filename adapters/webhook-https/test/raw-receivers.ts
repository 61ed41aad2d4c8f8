import type { AddressInfo, Server, Socket } from 'node:net';
import { createServer as createTcpServer, connect as tcpConnect } from 'node:net';
import { type TLSSocket, createServer as createTlsServer } from 'node:tls';
import type { TestCert } from './fixtures.js';

/** Receivers below HTTP, for answers a real server would not give and connections that go nowhere. */

/**
 * Listens on a free loopback port and keeps count of the server's open sockets (and of any other `track`ed):
 * `close` destroys them all before it closes the server.
 */
const listening = async (server: Server) => {
  const sockets = new Set<Socket>();
  const track = (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => undefined);
  };
  server.on('connection', track);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    port: (server.address() as AddressInfo).port,
    track,
    openSockets: () => sockets.size,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
};

export interface RawRequest {
  readonly conn: number;
  readonly head: string;
  readonly body: Buffer;
}

/**
 * A TLS server that reads requests itself (Content-Length bodies only) and lets the test write any bytes back.
 * `connections` counts TLS connections accepted (handshake done); `tcpConnections` every connection accepted,
 * handshake done or not; `openSockets` those not yet closed.
 */
export const rawReceiver = async (cert: TestCert, onRequest: (sock: TLSSocket, req: RawRequest) => void) => {
  const requests: RawRequest[] = [];
  let conns = 0;
  const server = createTlsServer({ cert: cert.cert, key: cert.key }, (sock) => {
    const conn = conns++;
    let buf = Buffer.alloc(0);
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const len = Number(/\r\ncontent-length:\s*(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + len) return;
        const req = { conn, head, body: buf.subarray(end + 4, end + 4 + len) };
        buf = buf.subarray(end + 4 + len);
        requests.push(req);
        onRequest(sock, req);
      }
    });
    sock.on('error', () => undefined);
  });
  server.on('tlsClientError', () => undefined);
  let tcpConns = 0;
  server.on('connection', () => void tcpConns++);
  const { port, openSockets, close } = await listening(server);
  return { port, requests, connections: () => conns, tcpConnections: () => tcpConns, openSockets, close };
};

/** A TCP server that accepts and never answers (no TLS handshake): a connect that never completes. */
export const silentTcp = async () => {
  // Reads (and drops) the ClientHello, so that the client's FIN is seen.
  const { port, openSockets, close } = await listening(createTcpServer((s) => s.resume()));
  return { port, openSockets, close };
};

/** A TCP proxy to `target` that forwards nothing until `delayMs` after it accepted: a slow handshake. */
export const slowProxy = async (target: number, delayMs: number) => {
  const server = createTcpServer((client) => {
    client.pause();
    setTimeout(() => {
      if (client.destroyed) return;
      const up = tcpConnect(target, '127.0.0.1', () => {
        client.pipe(up);
        up.pipe(client);
        client.resume();
      });
      listener.track(up);
      up.on('close', () => client.destroy());
      client.on('close', () => up.destroy());
    }, delayMs);
  });
  const listener = await listening(server);
  return { port: listener.port, close: listener.close };
};
