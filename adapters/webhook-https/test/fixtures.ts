import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type Server, createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createServer as createTcpServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll } from 'vitest';

export interface TestCert {
  readonly cert: string;
  readonly key: string;
}

/** A self-signed certificate for `localhost`, 127.0.0.1 and ::1, made by the system's openssl for one day. */
export const makeSelfSignedCert = (): TestCert => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-webhook-tls-'));
  try {
    const keyFile = join(dir, 'key.pem');
    const certFile = join(dir, 'cert.pem');
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1,IP:::1'],
      { stdio: 'pipe' },
    );
    return { cert: readFileSync(certFile, 'utf8'), key: readFileSync(keyFile, 'utf8') };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

export interface ReceivedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  /** The body bytes exactly as they arrived. */
  readonly body: Buffer;
  /** The local address the connection reached. */
  readonly localAddress: string;
}

export type Handler = (req: ReceivedRequest, res: ServerResponse) => void;

export interface Receiver {
  readonly port: number;
  readonly requests: ReceivedRequest[];
  /** TCP connections accepted, whether or not a request followed. */
  readonly connections: () => number;
  close(): Promise<void>;
}

const listen = (server: Server, port: number, host: string, ipv6Only = false): Promise<void> =>
  new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port, host, ipv6Only }, () => {
      server.off('error', reject);
      resolve();
    });
  });

/** An HTTPS server that records every request (after reading its whole body) and counts connections. */
export const startReceiver = async (cert: TestCert, handler: Handler, at: { host: string; port?: number; ipv6Only?: boolean }): Promise<Receiver> => {
  const requests: ReceivedRequest[] = [];
  let connections = 0;
  const server = createServer({ cert: cert.cert, key: cert.key }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const received: ReceivedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        localAddress: req.socket.localAddress ?? '',
      };
      requests.push(received);
      handler(received, res);
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  // TLS handshakes that the client aborts (an untrusted certificate) are expected in these tests.
  server.on('tlsClientError', () => undefined);
  await listen(server, at.port ?? 0, at.host, at.ipv6Only ?? false);
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    connections: () => connections,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
};

/** A port on 127.0.0.1 where nothing listens (it was free a moment ago). */
export const closedPort = async (): Promise<number> => {
  const s = createTcpServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
};

/** A resolver from a fixed table; any other name fails as the system resolver does. */
export const tableResolver = (table: Readonly<Record<string, readonly string[]>>) => {
  const calls: string[] = [];
  const resolve = async (host: string): Promise<readonly string[]> => {
    calls.push(host);
    const found = table[host];
    if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return found;
  };
  return { resolve, calls };
};

/**
 * A self-signed certificate made once for the test file (`cert`, read inside tests), and receivers (on 127.0.0.1
 * unless told) started with it, each closed after the test that started it.
 */
export const receiversPerTest = (): { readonly cert: TestCert; receiver(handler: Handler, at?: Parameters<typeof startReceiver>[2]): Promise<Receiver> } => {
  let made: TestCert | undefined;
  const open: Receiver[] = [];
  beforeAll(() => {
    made = makeSelfSignedCert();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((r) => r.close()));
  });
  return {
    get cert() {
      if (made === undefined) throw new Error('the certificate is made before the first test');
      return made;
    },
    receiver: async (handler, at = { host: '127.0.0.1' }) => {
      const r = await startReceiver(made!, handler, at);
      open.push(r);
      return r;
    },
  };
};
