import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:https';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  /** The body exactly as it arrived. */
  readonly raw: Buffer;
  readonly at: number;
}

/** What the receiver answers; `hang` never answers (to test timeouts). */
export type Answer = { readonly status: number; readonly body?: string; readonly headers?: Record<string, string> } | { readonly hang: true };

export interface HttpsReceiver {
  /** `https://localhost:<port>` */
  readonly url: string;
  readonly port: number;
  /** PEM of the self-signed certificate (trust it through ESIG_WEBHOOK_CA_FILE). */
  readonly certFile: string;
  readonly requests: ReceivedRequest[];
  /** Sets how the next requests are answered, per path; the last answer repeats. */
  answer(path: string, ...answers: Answer[]): void;
  waitFor(predicate: (r: ReceivedRequest) => boolean, count?: number, timeoutMs?: number): Promise<ReceivedRequest[]>;
  close(): Promise<void>;
}

/**
 * A real HTTPS webhook receiver on loopback, with a self-signed certificate for `localhost` and
 * `127.0.0.1` made by openssl for this run. It records every request's raw bytes and answers as told.
 */
export const startHttpsReceiver = async (): Promise<HttpsReceiver> => {
  const dir = mkdtempSync(join(tmpdir(), 'esig-receiver-'));
  const keyFile = join(dir, 'key.pem');
  const certFile = join(dir, 'cert.pem');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '1', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost,IP:127.0.0.1'], { stdio: 'ignore' });
  const requests: ReceivedRequest[] = [];
  const plans = new Map<string, Answer[]>();
  const hanging = new Set<import('node:http').ServerResponse>();
  const server = createServer({ key: readFileSync(keyFile), cert: readFileSync(certFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = req.url ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, raw: Buffer.concat(chunks), at: Date.now() });
      const plan = plans.get(path) ?? [{ status: 200, body: 'ok' }];
      const answer = plan.length > 1 ? plan.shift()! : plan[0]!;
      if ('hang' in answer) return void hanging.add(res);
      res.writeHead(answer.status, { 'content-type': 'text/plain', ...(answer.headers ?? {}) });
      res.end(answer.body ?? '');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${port}`,
    port,
    certFile,
    requests,
    answer: (path, ...answers) => void plans.set(path, [...answers]),
    waitFor: async (predicate, count = 1, timeoutMs = 20_000) => {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const found = requests.filter(predicate);
        if (found.length >= count) return found;
        if (Date.now() > until) throw new Error(`receiver: ${found.length} of ${count} matching requests within ${timeoutMs} ms (got ${requests.map((r) => `${r.path} ${r.headers['esig-event-type']}`).join(', ')})`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
};
