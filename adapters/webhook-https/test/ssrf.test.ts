import type { WebhookRequest } from '@esig/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHttpsWebhookSender } from '../src/index.js';
import { type Receiver, type TestCert, makeSelfSignedCert, startReceiver, tableResolver } from './fixtures.js';

const PUBLIC_V4 = '93.184.215.14';
const PUBLIC_V6 = '2606:2800:21f:cb07:6820:80da:af6b:8b2c';

const NAMES: Record<string, readonly string[]> = {
  localhost: ['127.0.0.1', '::1'],
  'evil.example': ['10.0.0.7'],
  'mixed.example': [PUBLIC_V4, '10.0.0.7'],
  'mixed6.example': [PUBLIC_V6, 'fd12:3456::1'],
  'mapped.example': ['::ffff:127.0.0.1'],
  'loopback6.example': ['::1'],
  'metadata.example': ['169.254.169.254'],
  'good.example': [PUBLIC_V4, PUBLIC_V6],
};

let cert: TestCert;
/** Listens on every local address (dual stack), so any loopback or "this host" connection lands here. */
let trap: Receiver;

beforeAll(async () => {
  cert = makeSelfSignedCert();
  trap = await startReceiver(cert, (_req, res) => res.writeHead(200).end(), { host: '::', ipv6Only: false });
});
afterAll(async () => {
  await trap.close();
});

const deliver = (url: string): WebhookRequest => ({ url, body: '{}', headers: {}, timeoutMs: 2_000 });

describe('the SSRF rules, at checkTarget and at send', () => {
  // Each URL points at the trap's port, so a connection that slipped through would be counted.
  const hostile = (p: number): ReadonlyArray<readonly [string, RegExp]> => [
    [`http://${PUBLIC_V4}:${p}/`, /only https/],
    [`http://127.0.0.1:${p}/`, /only https/],
    [`ftp://${PUBLIC_V4}:${p}/`, /only https/],
    ['not a url', /not a valid URL/],
    [`https://user:pass@${PUBLIC_V4}:${p}/`, /credentials/],
    [`https://user@${PUBLIC_V4}:${p}/`, /credentials/],
    [`https://:pass@${PUBLIC_V4}:${p}/`, /credentials/],
    [`https://127.0.0.1:${p}/`, /loopback/],
    [`https://localhost:${p}/`, /loopback/],
    [`https://2130706433:${p}/`, /loopback/],
    [`https://0177.0.0.1:${p}/`, /loopback/],
    [`https://0x7f000001:${p}/`, /loopback/],
    [`https://0x7f.1:${p}/`, /loopback/],
    [`https://017700000001:${p}/`, /loopback/],
    [`https://127.1:${p}/`, /loopback/],
    [`https://%31%32%37.0.0.1:${p}/`, /loopback/],
    [`https://0:${p}/`, /this network/],
    [`https://0.0.0.0:${p}/`, /this network/],
    [`https://[::1]:${p}/`, /loopback/],
    [`https://[::]:${p}/`, /unspecified/],
    [`https://[::ffff:127.0.0.1]:${p}/`, /IPv4-mapped of loopback/],
    [`https://[::ffff:7f00:1]:${p}/`, /IPv4-mapped of loopback/],
    [`https://[::127.0.0.1]:${p}/`, /IPv4-compatible/],
    [`https://[fe80::1]:${p}/`, /link-local/],
    [`https://[fd00::1]:${p}/`, /unique local/],
    [`https://[fec0::1]:${p}/`, /site-local/],
    [`https://10.0.0.1:${p}/`, /private/],
    [`https://172.16.5.4:${p}/`, /private/],
    [`https://172.31.255.255:${p}/`, /private/],
    [`https://192.168.1.1:${p}/`, /private/],
    [`https://169.254.169.254:${p}/latest/meta-data/`, /link-local/],
    [`https://[::ffff:a9fe:a9fe]:${p}/`, /IPv4-mapped of link-local/],
    [`https://[64:ff9b::a9fe:a9fe]:${p}/`, /NAT64 of link-local/],
    [`https://[2002:7f00:1::1]:${p}/`, /6to4 of loopback/],
    [`https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]:${p}/`, /Teredo/],
    [`https://100.64.0.1:${p}/`, /carrier-grade NAT/],
    [`https://224.0.0.1:${p}/`, /multicast/],
    [`https://255.255.255.255:${p}/`, /reserved/],
    [`https://240.0.0.1:${p}/`, /reserved/],
    [`https://198.18.0.1:${p}/`, /benchmarking/],
    [`https://192.0.2.1:${p}/`, /documentation/],
    [`https://198.51.100.7:${p}/`, /documentation/],
    [`https://203.0.113.9:${p}/`, /documentation/],
    [`https://192.0.0.8:${p}/`, /IETF protocol/],
    [`https://[2001:db8::1]:${p}/`, /documentation/],
    [`https://[ff02::1]:${p}/`, /multicast/],
    [`https://evil.example:${p}/`, /evil\.example resolves to 10\.0\.0\.7 is private/],
    [`https://mixed.example:${p}/`, /10\.0\.0\.7 is private/],
    [`https://mixed6.example:${p}/`, /unique local/],
    [`https://mapped.example:${p}/`, /IPv4-mapped of loopback/],
    [`https://loopback6.example:${p}/`, /loopback/],
    [`https://metadata.example:${p}/`, /link-local/],
  ];

  /**
   * What the caller reads: the range of an address the URL names itself, but of a name only that it resolves to
   * a private or reserved address — which address, and which range, is the server's resolver's answer (an
   * internal name's address, with split-horizon DNS) and goes to the log, with `reason` as the log's detail.
   */
  const shown = (url: string, reason: RegExp) => {
    const host = URL.canParse(url) ? new URL(url).hostname : '';
    return NAMES[host] === undefined ? expect.stringMatching(reason) : `${host} resolves to a private or reserved address`;
  };

  it('has at least 30 hostile URLs, each refused by checkTarget with its reason', async () => {
    const { resolve } = tableResolver(NAMES);
    const logged: Array<Record<string, unknown>> = [];
    const sender = createHttpsWebhookSender({ resolve, extraCa: cert.cert, log: (fields) => void logged.push({ ...fields }) });
    const table = hostile(trap.port);
    expect(table.length).toBeGreaterThanOrEqual(30);
    for (const [url, reason] of table) {
      logged.length = 0;
      const verdict = await sender.checkTarget(url)();
      expect(verdict, url).toEqual({ ok: false, reason: shown(url, reason) });
      if (URL.canParse(url) && NAMES[new URL(url).hostname] !== undefined) {
        expect(logged, url).toEqual([expect.objectContaining({ url, detail: expect.stringMatching(reason) })]);
      }
    }
    expect(trap.connections()).toBe(0);
  });

  it('refuses each of them at send too, without opening a connection', async () => {
    const { resolve } = tableResolver(NAMES);
    // With the trap's certificate trusted, a connection that got through would complete and be counted.
    const sender = createHttpsWebhookSender({ resolve, extraCa: cert.cert });
    for (const [url, reason] of hostile(trap.port)) {
      const r = await sender.send(deliver(url))();
      // The delivery log shows the endpoint's owner what checkTarget shows: no address its name resolved to.
      expect(r, url).toMatchObject({ _tag: 'NoAnswer', error: 'refused_target', detail: shown(url, reason) });
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
    }
    expect(trap.connections()).toBe(0);
    expect(trap.requests).toHaveLength(0);
  });

  it('refuses localhost through the system resolver too', async () => {
    const sender = createHttpsWebhookSender({ extraCa: cert.cert });
    expect(await sender.checkTarget(`https://localhost:${trap.port}/`)()).toEqual({ ok: false, reason: 'localhost resolves to a private or reserved address' });
    expect(await sender.send(deliver(`https://localhost:${trap.port}/`))()).toMatchObject({ _tag: 'NoAnswer', error: 'refused_target' });
    expect(trap.connections()).toBe(0);
  });

  it('does not resolve an IP literal, and passes a public one without any network', async () => {
    const { resolve, calls } = tableResolver({});
    const sender = createHttpsWebhookSender({ resolve });
    for (const url of [`https://${PUBLIC_V4}/`, `https://${PUBLIC_V4}:8443/hooks?x=1`, `https://[${PUBLIC_V6}]/`, 'https://[2606:4700:4700::1111]/', 'https://1.1.1.1/']) {
      expect(await sender.checkTarget(url)(), url).toEqual({ ok: true });
    }
    // An IPv4 address inside NAT64 and 6to4 answers to the rules for that IPv4 address.
    expect(await sender.checkTarget('https://[64:ff9b::5db8:d70e]/')()).toEqual({ ok: true });
    expect(await sender.checkTarget('https://[2002:5db8:d70e::1]/')()).toEqual({ ok: true });
    expect(calls).toEqual([]);
  });

  it('passes a host name whose every address is public', async () => {
    const { resolve, calls } = tableResolver(NAMES);
    const sender = createHttpsWebhookSender({ resolve });
    expect(await sender.checkTarget('https://good.example/webhooks')()).toEqual({ ok: true });
    expect(await sender.checkTarget('https://GOOD.example/')()).toEqual({ ok: true });
    // One name however it is spelt: the second check reuses the first answer (checked again, and passing).
    expect(calls).toEqual(['good.example']);
  });
});

describe('allowHosts (development only)', () => {
  it('exempts the listed ranges and names, and nothing else', async () => {
    const { resolve } = tableResolver({ ...NAMES, 'localhost.': ['127.0.0.1'] });
    const sender = createHttpsWebhookSender({ resolve, allowHosts: ['127.0.0.1/32', ' localhost ', '', '::1'] });
    for (const url of ['https://127.0.0.1/', 'https://2130706433/', 'https://[::ffff:127.0.0.1]/', 'https://[::1]/', 'https://localhost/', 'https://LOCALHOST./']) {
      expect(await sender.checkTarget(url)(), url).toEqual({ ok: true });
    }
    for (const url of ['https://127.0.0.2/', 'https://10.0.0.1/', 'https://[fd00::1]/', 'https://evil.example/', 'http://127.0.0.1/', 'https://u:p@127.0.0.1/']) {
      expect(await sender.checkTarget(url)(), url).toMatchObject({ ok: false });
    }
  });

  it('exempts a name for all its addresses, but only that name', async () => {
    const { resolve } = tableResolver({ ...NAMES, 'dev.test': ['10.1.2.3', '127.0.0.1'], 'other.test': ['10.1.2.3'] });
    const sender = createHttpsWebhookSender({ resolve, allowHosts: ['dev.test'] });
    expect(await sender.checkTarget('https://dev.test/')()).toEqual({ ok: true });
    expect(await sender.checkTarget('https://other.test/')()).toMatchObject({ ok: false });
    expect(await sender.checkTarget('https://10.1.2.3/')()).toMatchObject({ ok: false });
  });

  it('refuses an entry that is neither a name nor an address range', () => {
    for (const bad of ['10.0.0.0/33', 'not a host', '127.1/32', 'http://x']) {
      expect(() => createHttpsWebhookSender({ allowHosts: [bad] }), bad).toThrow(/allowHosts/);
    }
  });
});

describe('DNS rebinding', () => {
  /**
   * `localhost` is the name: Node's own resolver would send it to 127.0.0.1. The test resolver answers
   * 127.0.0.2 first (allowed, standing in for a public address) and 127.0.0.1 afterwards (refused).
   */
  let allowed: Receiver;
  const forbidden: Receiver[] = [];

  beforeAll(async () => {
    for (let attempt = 0; ; attempt += 1) {
      allowed = await startReceiver(cert, (_req, res) => res.writeHead(200).end('from 127.0.0.2'), { host: '127.0.0.2' });
      try {
        forbidden.push(await startReceiver(cert, (_req, res) => res.writeHead(200).end('from 127.0.0.1'), { host: '127.0.0.1', port: allowed.port }));
        forbidden.push(await startReceiver(cert, (_req, res) => res.writeHead(200).end('from ::1'), { host: '::1', port: allowed.port, ipv6Only: true }));
        return;
      } catch (e) {
        await Promise.all([allowed, ...forbidden.splice(0)].map((r) => r.close()));
        if (attempt >= 5) throw e;
      }
    }
  });
  afterAll(async () => {
    await Promise.all([allowed, ...forbidden].map((r) => r.close()));
  });

  // An answer is reused for a second (resolutionCacheMs): each test moves this clock past it to see a new one.
  let clock = 0;
  const aSecondLater = () => {
    clock += 1_000;
  };
  const rebinding = () => {
    let calls = 0;
    const resolve = async (host: string): Promise<readonly string[]> => {
      expect(host).toBe('localhost');
      calls += 1;
      return calls === 1 ? ['127.0.0.2'] : ['127.0.0.1'];
    };
    return { resolve, calls: () => calls };
  };
  const forbiddenConnections = () => forbidden.reduce((n, r) => n + r.connections(), 0);

  it('send resolves once and connects to the address it checked, not to a fresh resolution', async () => {
    const { resolve, calls } = rebinding();
    const sender = createHttpsWebhookSender({ resolve, allowHosts: ['127.0.0.2/32'], extraCa: cert.cert, monotonicNow: () => clock });
    const r = await sender.send(deliver(`https://localhost:${allowed.port}/hook`))();
    expect(r).toMatchObject({ _tag: 'Answered', status: 200, bodyExcerpt: 'from 127.0.0.2' });
    expect(calls()).toBe(1);
    expect(allowed.requests.map((q) => [q.localAddress, q.headers.host])).toEqual([['127.0.0.2', `localhost:${allowed.port}`]]);
    expect(forbiddenConnections()).toBe(0);

    // Within the second, the next send reuses the checked answer, checks it again and goes to 127.0.0.2.
    expect(await sender.send(deliver(`https://localhost:${allowed.port}/hook`))()).toMatchObject({ bodyExcerpt: 'from 127.0.0.2' });
    expect(calls()).toBe(1);

    // After it, the next send resolves again, gets the loopback address, and refuses.
    aSecondLater();
    expect(await sender.send(deliver(`https://localhost:${allowed.port}/hook`))()).toMatchObject({ _tag: 'NoAnswer', error: 'refused_target' });
    expect(calls()).toBe(2);
    expect(forbiddenConnections()).toBe(0);
  });

  it('a target that passed checkTarget is checked again at send', async () => {
    const { resolve, calls } = rebinding();
    const logged: unknown[] = [];
    const sender = createHttpsWebhookSender({ resolve, allowHosts: ['127.0.0.2/32'], extraCa: cert.cert, monotonicNow: () => clock, log: (fields) => void logged.push(fields.detail) });
    expect(await sender.checkTarget(`https://localhost:${allowed.port}/`)()).toEqual({ ok: true });
    aSecondLater();
    const r = await sender.send(deliver(`https://localhost:${allowed.port}/`))();
    expect(r).toMatchObject({ _tag: 'NoAnswer', error: 'refused_target', detail: 'localhost resolves to a private or reserved address' });
    expect(logged).toEqual([expect.stringMatching(/127\.0\.0\.1 is loopback/)]);
    expect(calls()).toBe(2);
    expect(forbiddenConnections()).toBe(0);
  });
});
