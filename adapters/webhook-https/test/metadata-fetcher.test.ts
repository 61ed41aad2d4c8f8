import { describe, expect, it } from 'vitest';
import { createClientMetadataFetcher } from '../src/index.js';
import { type Handler, closedPort, receiversPerTest, tableResolver } from './fixtures.js';
import { silentTcp } from './raw-receivers.js';

const tls = receiversPerTest();
const { receiver } = tls;

const TIMEOUT_MS = 1_000;
/** The one text for every way the exchange can fail: refused, reset, timed out, a certificate not trusted. */
const NO_ANSWER = `no HTTPS answer came from its host (it must accept the connection, present a certificate trusted for its name and answer within ${TIMEOUT_MS} ms)`;

const fetcher = (over: Parameters<typeof createClientMetadataFetcher>[0] = {}) => {
  const logged: Array<Record<string, unknown>> = [];
  const f = createClientMetadataFetcher({ allowHosts: ['127.0.0.1/32'], extraCa: tls.cert.cert, timeoutMs: TIMEOUT_MS, log: (fields) => void logged.push({ ...fields }), ...over });
  return { fetch: (url: string) => f.fetch(url)(), logged };
};

const json = (body: unknown): Handler => (_req, res) => void res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

describe('createClientMetadataFetcher', () => {
  it('fetches a document over HTTPS', async () => {
    const rx = await receiver(json({ client_id: 'x' }));
    expect(await fetcher().fetch(`https://127.0.0.1:${rx.port}/c.json`)).toEqual({ ok: true, json: { client_id: 'x' } });
  });

  it('says what is wrong with the client’s own URL or document', async () => {
    const f = fetcher({ resolve: tableResolver({ 'internal.test': ['10.1.2.3'] }).resolve });
    expect(await f.fetch('http://127.0.0.1/c.json')).toEqual({ ok: false, reason: 'only https URLs are allowed, not http:' });
    expect(await f.fetch('https://10.0.0.1/c.json')).toEqual({ ok: false, reason: '10.0.0.1 is private (10.0.0.0/8)' });
    expect(await f.fetch('https://internal.test/c.json')).toEqual({ ok: false, reason: 'internal.test resolves to a private or reserved address' });
    const missing = await receiver((_req, res) => void res.writeHead(404).end());
    expect(await f.fetch(`https://127.0.0.1:${missing.port}/c.json`)).toEqual({ ok: false, reason: 'answered 404' });
    const text = await receiver((_req, res) => void res.writeHead(200).end('<html>'));
    expect(await f.fetch(`https://127.0.0.1:${text.port}/c.json`)).toEqual({ ok: false, reason: 'not JSON' });
  });

  it('tells the client a name did not resolve, not what the resolver said', async () => {
    const f = fetcher({ resolve: tableResolver({}).resolve });
    expect(await f.fetch('https://nosuch.test/c.json')).toEqual({ ok: false, reason: 'nosuch.test did not resolve to any address' });
    expect(f.logged).toEqual([expect.objectContaining({ url: 'https://nosuch.test/c.json', detail: expect.stringMatching(/ENOTFOUND/) })]);
  });

  it('gives one text for a refused connection, an untrusted or mismatched certificate and a timeout; the cause goes to the log', async () => {
    const closed = await closedPort();
    const rx = await receiver(json({ client_id: 'x' }));
    const silent = await silentTcp();
    try {
      const cases: Array<[string, ReturnType<typeof fetcher>, string, RegExp]> = [
        ['refused', fetcher(), `https://127.0.0.1:${closed}/c.json`, /ECONNREFUSED/],
        ['untrusted', fetcher({ extraCa: undefined }), `https://127.0.0.1:${rx.port}/c.json`, /SELF_SIGNED|self-signed/],
        // The test certificate names localhost and 127.0.0.1, not other.test.
        ['mismatched', fetcher({ resolve: tableResolver({ 'other.test': ['127.0.0.1'] }).resolve }), `https://other.test:${rx.port}/c.json`, /ERR_TLS_CERT_ALTNAME_INVALID/],
        ['silent', fetcher(), `https://127.0.0.1:${silent.port}/c.json`, /within 1000 ms/],
      ];
      for (const [what, f, url, cause] of cases) {
        const r = await f.fetch(url);
        expect(r, what).toEqual({ ok: false, reason: NO_ANSWER });
        expect(f.logged, what).toEqual([expect.objectContaining({ url, detail: expect.stringMatching(cause) })]);
      }
    } finally {
      await silent.close();
    }
  });
});
