import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isMetadataDocumentClientId, redirectUriMatches, redirectUriProblem, urlHost } from '../src/use-cases/oauth/rules.js';

const LOOPBACK = ['http://127.0.0.1:7777/callback'];

/**
 * The browser follows the redirect as the WHATWG URL parser reads it (the server builds it with `new URL`); the
 * core checks its own parse. Wherever the two could disagree on the host, an attacker chooses the host.
 */
describe('redirect URIs are read as a browser reads them', () => {
  it('a URI a browser sends to another host never matches a loopback registration (the exploit)', () => {
    for (const given of [
      'http://attacker.example\\@127.0.0.1/callback',
      'http://attacker.example\\@127.0.0.1:7777/callback',
      'http://attacker.example@127.0.0.1:7777/callback',
      'http://user:pw@127.0.0.1/callback',
      'http://@127.0.0.1:7777/callback',
      'http://127.0.0.1\\@attacker.example/callback',
      'http://127.0.0.1:7777\\.attacker.example/callback',
      'http://127.0.0.1:7777/callback\\..\\..\\',
    ]) {
      expect(redirectUriMatches(LOOPBACK, given), given).toBe(false);
      expect(redirectUriProblem(given), given).not.toBeNull();
    }
  });

  it('refuses at registration what a browser cannot parse, or parses to another host or port', () => {
    for (const uri of [
      'https://good.com:99999/cb',
      'https://a%zz.com/cb',
      'https://a%2e.com/cb',
      'https://exa\\mple.com/cb',
      'https://[::zz]/cb',
      'https://[1:2]/cb',
      'https://0x7f.1/cb',
      'https://2130706433/cb',
      'https://127.1/cb',
      'https://010.0.0.1/cb',
      'https://ex%41mple.com/cb',
      'https://exämple.com/cb',
    ])
      expect(redirectUriProblem(uri), uri).not.toBeNull();
    for (const uri of ['https://app.example.com/cb', 'https://app.example.com:8443/oauth/cb?x=1', 'http://localhost:3000/cb', 'http://[::1]/cb', 'https://10.0.0.1/cb', 'https://my_host.example/cb'])
      expect(redirectUriProblem(uri), uri).toBeNull();
  });

  it('says what is wrong', () => {
    expect(redirectUriProblem('https://a.example/c d')).toMatch(/spaces/);
    expect(redirectUriProblem('https://a.example\\b/cb')).toMatch(/backslash/);
    expect(redirectUriProblem('https://127.1/cb')).toMatch(/four decimal numbers/);
    expect(redirectUriProblem('https://a.example/cb#x')).toMatch(/fragment/);
    expect(redirectUriProblem('https://u@a.example/cb')).toMatch(/credentials/);
  });

  it('a loopback URI matches on any port, but only with the registered path and query', () => {
    expect(redirectUriMatches(LOOPBACK, 'http://127.0.0.1:50123/callback')).toBe(true);
    expect(redirectUriMatches(LOOPBACK, 'http://127.0.0.1/callback')).toBe(true);
    expect(redirectUriMatches(LOOPBACK, 'http://127.0.0.1:50123/other')).toBe(false);
    expect(redirectUriMatches(LOOPBACK, 'http://localhost:7777/callback')).toBe(false);
    expect(redirectUriMatches(LOOPBACK, 'http://127.0.0.1:99999/callback')).toBe(false);
  });

  it('a metadata document client id a browser reads with another host is refused', () => {
    expect(isMetadataDocumentClientId('https://vendor.example/client.json')).toBe(true);
    expect(isMetadataDocumentClientId('https://attacker.example\\@vendor.example/client.json')).toBe(false);
    expect(isMetadataDocumentClientId('https://vendor.example:70000/client.json')).toBe(false);
  });

  // Pieces that URL parsers read differently: separators, userinfo, escapes, IP spellings, non-ASCII.
  const piece = fc.constantFrom(
    'a', 'B', '1', '0', '255', '256', '0x7f', '.', '-', '_', '~', ':', '@', '\\', '/', '%', '%2e', '%41', '%zz', '[', ']', '::1', '?', '#', 'ä', '\u0130', ' ', '\t', 'localhost', '127.0.0.1', 'example.com', 'xn--e1afmkfd',
  );
  const candidate = fc.tuple(fc.constantFrom('http://', 'https://', 'HTTP://', 'https:/', 'https:///'), fc.array(piece, { maxLength: 8 }), fc.constantFrom('', '/', '/cb', '/cb?x=1', ':7777/cb', ':65535/', ':65536/')).map(([s, h, rest]) => s + h.join('') + rest);

  it('whatever the core accepts, the WHATWG parser reads with the same scheme, host and port, and no credentials (property)', () => {
    fc.assert(
      fc.property(fc.oneof(candidate, nearLoopback), (uri) => {
        const accepted = redirectUriProblem(uri) === null || isMetadataDocumentClientId(uri);
        if (!accepted) return;
        const u = new URL(uri); // must not throw
        expect(u.username + u.password).toBe('');
        const host = urlHost(uri);
        const explicitPort = host.includes(':') && !host.endsWith(']') ? host.slice(host.lastIndexOf(':') + 1) : '';
        const defaultPort = u.protocol === 'https:' ? '443' : '80';
        expect(u.hostname).toBe(explicitPort === '' ? host : host.slice(0, host.lastIndexOf(':')));
        expect(u.port).toBe(explicitPort === defaultPort ? '' : explicitPort);
      }),
      { numRuns: 20_000 },
    );
  });

  // Near-misses of a loopback redirect: pieces around a loopback host.
  const nearLoopback = fc
    .tuple(fc.constantFrom('http://', 'HTTP://', 'https://'), fc.array(piece, { maxLength: 3 }), fc.constantFrom('127.0.0.1', 'localhost', '[::1]'), fc.array(piece, { maxLength: 3 }), fc.constantFrom('/cb', ':7777/cb', '/cb?x=1', ''))
    .map(([s, before, host, after, rest]) => s + before.join('') + host + after.join('') + rest);

  it('whatever matches a loopback registration, a browser sends to that loopback host (property)', () => {
    const registered = ['http://127.0.0.1/cb', 'http://localhost/cb', 'http://[::1]/cb'];
    fc.assert(
      fc.property(fc.oneof(candidate, nearLoopback), (uri) => {
        if (!redirectUriMatches(registered, uri)) return;
        const u = new URL(uri);
        expect(['127.0.0.1', 'localhost', '[::1]']).toContain(u.hostname);
        expect(u.username + u.password).toBe('');
      }),
      { numRuns: 20_000 },
    );
  });
});
