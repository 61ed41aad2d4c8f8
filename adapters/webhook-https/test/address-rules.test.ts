import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { checkAddress, parseRetryAfter, parseTarget } from '../src/index.js';
import { ipv4, nonPublicV4, v4Groups } from './arbitraries.js';

describe('checkAddress', () => {
  it('passes public unicast addresses', () => {
    for (const ip of ['93.184.215.14', '1.1.1.1', '8.8.8.8', '172.15.255.255', '172.32.0.0', '100.63.255.255', '100.128.0.0', '198.17.255.255', '198.20.0.0', '223.255.255.255', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e', '2002:5db8:d70e::1', '64:ff9b::808:808']) {
      expect(checkAddress(ip), ip).toEqual({ ok: true });
    }
  });

  it('refuses every special-purpose address, naming the range', () => {
    const table: ReadonlyArray<readonly [string, RegExp]> = [
      ['0.0.0.0', /this network/],
      ['0.255.255.255', /this network/],
      ['10.255.255.255', /private/],
      ['100.64.0.1', /carrier-grade NAT/],
      ['100.127.255.255', /carrier-grade NAT/],
      ['127.0.0.1', /loopback/],
      ['127.255.255.254', /loopback/],
      ['169.254.169.254', /link-local/],
      ['172.16.0.0', /private/],
      ['172.31.255.255', /private/],
      ['192.0.0.8', /IETF protocol/],
      ['192.0.2.1', /documentation/],
      ['192.88.99.1', /6to4 relay/],
      ['192.168.0.1', /private/],
      ['198.18.0.1', /benchmarking/],
      ['198.19.255.255', /benchmarking/],
      ['198.51.100.7', /documentation/],
      ['203.0.113.9', /documentation/],
      ['224.0.0.1', /multicast/],
      ['239.255.255.250', /multicast/],
      ['240.0.0.1', /reserved/],
      ['255.255.255.255', /reserved/],
      ['192.175.48.1', /as112/],
      ['::', /unspecified/],
      ['::1', /loopback/],
      ['::7f00:1', /IPv4-compatible/],
      ['::808:808', /IPv4-compatible/],
      ['::ffff:127.0.0.1', /IPv4-mapped of loopback/],
      ['::ffff:7f00:1', /IPv4-mapped of loopback/],
      ['::ffff:a00:1', /IPv4-mapped of private/],
      ['::ffff:0:a00:1', /rfc6145/],
      ['64:ff9b::a00:1', /NAT64 of private/],
      ['64:ff9b::7f00:1', /NAT64 of loopback/],
      ['64:ff9b:1::1', /rfc6052/],
      ['2002:a00:1::1', /6to4 of private/],
      ['2002:a9fe:a9fe::', /6to4 of link-local/],
      ['2001:0:4136:e378:8000:63bf:3fff:fdd2', /Teredo/],
      ['2001:2::1', /benchmarking/],
      ['2001:db8::1', /documentation/],
      ['3fff::1', /documentation/],
      ['100::1', /discard/],
      ['fc00::1', /unique local/],
      ['fd00::1', /unique local/],
      ['fe80::1', /link-local/],
      ['febf::1', /link-local/],
      ['fec0::1', /site-local/],
      ['ff02::1', /multicast/],
      ['ff0e::1', /multicast/],
      ['fe80::1%eth0', /scoped/],
      ['4000::1', /outside 2000::\/3/],
      ['1::1', /outside 2000::\/3/],
    ];
    for (const [ip, reason] of table) {
      expect(checkAddress(ip), ip).toEqual({ ok: false, reason: expect.stringMatching(reason) });
      expect(checkAddress(ip), ip).toEqual({ ok: false, reason: expect.stringContaining(ip) });
    }
  });

  it('refuses what is not a plain address, in whatever spelling', () => {
    for (const s of ['', 'localhost', '127.1', '2130706433', '0x7f000001', '0177.0.0.1', '127.0.0.1 ', '[::1]', '127.0.0.1/32', '1.2.3.4.5']) {
      expect(checkAddress(s), s).toEqual({ ok: false, reason: expect.stringMatching(/not an IP address/) });
    }
  });

  it('refuses any address in a refused IPv4 range, plain, IPv4-mapped, NAT64 or 6to4', () => {
    fc.assert(
      fc.property(nonPublicV4, (ip) => {
        const g = v4Groups(ip);
        for (const form of [ip, `::ffff:${ip}`, `::ffff:${g}`, `64:ff9b::${g}`, `2002:${g}::1`]) {
          expect(checkAddress(form).ok, form).toBe(false);
        }
      }),
    );
  });

  it('judges an IPv4-mapped, NAT64 or 6to4 address as its IPv4 address', () => {
    fc.assert(
      fc.property(ipv4, (ip) => {
        const verdict = checkAddress(ip).ok;
        const g = v4Groups(ip);
        for (const form of [`::ffff:${ip}`, `::ffff:${g}`, `64:ff9b::${g}`, `2002:${g}::1`]) {
          expect(checkAddress(form).ok, form).toBe(verdict);
        }
      }),
    );
  });

  it('lets allow entries exempt addresses, mapped ones included, and only those', () => {
    expect(checkAddress('127.0.0.1', ['127.0.0.1/32'])).toEqual({ ok: true });
    expect(checkAddress('::ffff:127.0.0.1', ['127.0.0.1/32'])).toEqual({ ok: true });
    expect(checkAddress('127.0.0.1', ['::ffff:127.0.0.1/128'])).toEqual({ ok: true });
    expect(checkAddress('127.0.0.2', ['127.0.0.1/32']).ok).toBe(false);
    expect(checkAddress('10.9.8.7', ['10.0.0.0/8'])).toEqual({ ok: true });
    expect(checkAddress('::1', ['::1'])).toEqual({ ok: true });
    expect(checkAddress('::1', ['127.0.0.0/8']).ok).toBe(false);
    expect(checkAddress('127.0.0.1', ['localhost']).ok).toBe(false);
  });
});

describe('parseTarget', () => {
  it('reads host, port and path, normalising the host as a browser would', () => {
    expect(parseTarget('https://Hooks.Example.com/a/b?c=1#frag')).toEqual({ ok: true, host: 'hooks.example.com', port: 443, path: '/a/b?c=1', literal: false });
    expect(parseTarget('https://example.com:8443')).toEqual({ ok: true, host: 'example.com', port: 8443, path: '/', literal: false });
    expect(parseTarget('https://[2606:4700::1111]:444/x')).toEqual({ ok: true, host: '2606:4700::1111', port: 444, path: '/x', literal: true });
    expect(parseTarget('https://bücher.example/')).toMatchObject({ ok: true, host: 'xn--bcher-kva.example' });
    for (const [url, host] of [
      ['https://2130706433/', '127.0.0.1'],
      ['https://0x7f.1/', '127.0.0.1'],
      ['https://017700000001/', '127.0.0.1'],
      ['https://0177.0.0.1/', '127.0.0.1'],
      ['https://127.1/', '127.0.0.1'],
      ['https://0/', '0.0.0.0'],
      ['https://[::ffff:127.0.0.1]/', '::ffff:7f00:1'],
    ] as const) {
      expect(parseTarget(url), url).toMatchObject({ ok: true, host, literal: true });
    }
  });

  it('refuses other schemes, credentials and non-URLs', () => {
    for (const [url, reason] of [
      ['http://example.com/', /only https/],
      ['wss://example.com/', /only https/],
      ['file:///etc/passwd', /only https/],
      ['https://user:pass@example.com/', /credentials/],
      ['https://user@example.com/', /credentials/],
      ['https://:pass@example.com/', /credentials/],
      ['example.com', /not a valid URL/],
      ['https://[::1/', /not a valid URL/],
      ['', /not a valid URL/],
      // Port 0 is no port a receiver listens on (a connect to it goes wherever the system picks).
      ['https://example.com:0/', /port 0/],
    ] as const) {
      expect(parseTarget(url), url).toEqual({ ok: false, reason: expect.stringMatching(reason) });
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.UTC(1994, 10, 6, 8, 49, 0);
  it('reads delta-seconds and the three HTTP-date forms', () => {
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 120 ', now)).toBe(120);
    expect(parseRetryAfter('0', now)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now)).toBe(37);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(37);
    expect(parseRetryAfter('Sun Nov  6 08:49:37 1994', now)).toBe(37);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:00 GMT', now + 500)).toBe(0);
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:01 GMT', now + 500)).toBe(1);
  });

  it('is null when absent or unreadable', () => {
    for (const v of [undefined, '', '-5', '7.5', '1e3', 'soon', '2025-01-01', 'Sun, 06 Nov 1994 08:49:37', '99999999999999999999']) {
      expect(parseRetryAfter(v, now), String(v)).toBeNull();
    }
  });
});
