import type { ApiScope, GrantedScope } from '../../model/scopes.js';
import { API_SCOPES, hasScope, isApiScope } from '../../model/scopes.js';

/** Access tokens: the prefix tells them from keys and refresh tokens; 43 alphanumerics ≈ 256 bits. */
export const ACCESS_TOKEN_PATTERN: RegExp = /^esig_oat_[A-Za-z0-9]{43}$/;
export const REFRESH_TOKEN_PATTERN: RegExp = /^esig_ort_[A-Za-z0-9]{43}$/;
export const AUTHORIZATION_CODE_PATTERN: RegExp = /^[A-Za-z0-9]{43}$/;
export const ACCESS_TOKEN_TTL_S = 3600;
export const AUTHORIZATION_CODE_TTL_S = 60;

/**
 * The scopes an access token can carry: every API scope but `api_keys:write`. A token may not mint API
 * keys: a key would outlive the grant and escape its revocation.
 */
export const OAUTH_SCOPES: readonly ApiScope[] = API_SCOPES.filter((s) => s !== 'api_keys:write');

/**
 * Granted scopes = requested ∩ what the consenting key holds, within OAUTH_SCOPES. No scope requested means
 * everything the key may hand on. Unknown requested scopes are ignored (RFC 6749 §3.3 lets the server
 * grant less than asked).
 */
export const grantableScopes = (requested: readonly string[], keyScopes: readonly GrantedScope[]): ApiScope[] => {
  const wanted = requested.length === 0 ? OAUTH_SCOPES : requested.filter(isApiScope);
  return OAUTH_SCOPES.filter((s) => wanted.includes(s) && hasScope(keyScopes, s));
};

/** Splits an RFC 6749 `scope` parameter (space separated); absent or empty is none. */
export const parseScopeParam = (scope: string | undefined): string[] => (scope ?? '').split(' ').filter((s) => s.length > 0);

const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** The parts of an absolute URL this module checks (RFC 3986 appendix B; the core has no URL global). */
interface UrlParts {
  readonly protocol: string;
  /** Whether the authority has userinfo (`…@`), even empty. */
  readonly userinfo: boolean;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;
}

/** Characters a browser's parser strips or reads differently wherever they come. */
const SPACE_OR_CONTROL = /[\s\x00-\x1f\x7f]/;

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/;
const AUTHORITY = /^(?:([^@]*)@)?([^:@]+|\[[^\]]*\])(?::([^:@]*))?$/;
/** Dot-separated labels of ASCII letters, digits, `-` and `_`, with an optional final dot. */
const DOMAIN = /^(?:[A-Za-z0-9_-]+\.)*[A-Za-z0-9_-]+\.?$/;
/** What makes the WHATWG parser read a host as an IPv4 address: its last label is a number (decimal or 0x hex). */
const ENDS_IN_NUMBER = /(?:^|\.)(?:\d+|0[xX][0-9A-Fa-f]*)\.?$/;
const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const DOTTED_QUAD = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);
/** A port as written by a browser's parser: no leading zero, at most 65535 (empty is the scheme's default). */
const PORT = /^(?:|0|[1-9]\d{0,4})$/;

/**
 * The host of an authority, when the WHATWG URL parser (the one that builds the redirect and that the
 * browser follows) reads it as the same host, in the same spelling; otherwise null. A domain of plain ASCII
 * labels; an IPv4 address only as four decimal octets (the parser reads `127.1`, `0x7f.1` or `2130706433` as
 * 127.0.0.1); `[::1]` as the only IPv6 literal; no percent-escapes and no `xn--` labels (the parser decodes
 * both, and fails on some).
 */
const hostOf = (raw: string): string | null => {
  const h = raw.toLowerCase();
  if (h === '[::1]') return h;
  if (!DOMAIN.test(h) || /(?:^|\.)xn--/.test(h)) return null;
  if (ENDS_IN_NUMBER.test(h)) return DOTTED_QUAD.test(h) ? h : null;
  return h;
};

/**
 * Parses an absolute hierarchical URL; null when it is not one, or when a browser could read it differently:
 * a space, a control character or a backslash anywhere (browsers take `\` for `/`, so
 * `http://evil.example\@127.0.0.1/` goes to evil.example), a host `hostOf` refuses, a port out of range.
 */
const parseUrl = (s: string): UrlParts | null => {
  if (SPACE_OR_CONTROL.test(s) || s.includes('\\')) return null;
  const m = URI.exec(s);
  if (m === null) return null;
  const a = AUTHORITY.exec(m[2]!);
  if (a === null) return null;
  const hostname = hostOf(a[2]!);
  const port = a[3] ?? '';
  if (hostname === null || !PORT.test(port) || Number(port) > 65535) return null;
  return {
    protocol: `${m[1]!.toLowerCase()}:`,
    userinfo: a[1] !== undefined,
    hostname,
    port,
    pathname: m[3] === '' ? '/' : m[3]!,
    search: m[4] ?? '',
    hash: m[5] ?? '',
  };
};

/** The host (and port) of a URL, for showing on the consent page; '' when it does not parse. */
export const urlHost = (s: string): string => {
  const u = parseUrl(s);
  return u === null ? '' : u.port === '' ? u.hostname : `${u.hostname}:${u.port}`;
};

/**
 * A redirect URI a client may register: absolute, no fragment, https, or http on a loopback host (native
 * apps, RFC 8252 §7.3). Returns a reason when refused.
 */
export const redirectUriProblem = (uri: string): string | null => {
  if (SPACE_OR_CONTROL.test(uri)) return 'must not contain spaces or control characters';
  if (uri.includes('\\')) return 'must not contain a backslash (a browser reads it as /)';
  const u = parseUrl(uri);
  if (u === null) return 'is not an absolute URL with a host a browser reads the same way: ASCII labels, an IPv4 address as four decimal numbers, or [::1]; a port up to 65535';
  if (u.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (u.userinfo) return 'must not carry credentials';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return null;
  return 'must be https, or http on localhost / 127.0.0.1 / [::1]';
};

/**
 * Whether `given` matches a registered redirect URI: exactly, or for a loopback http URI with any port
 * (RFC 8252 §7.3: native apps pick a free port at run time).
 */
export const redirectUriMatches = (registered: readonly string[], given: string): boolean => {
  // Checked even when it equals a registered URI: one registered under older, looser rules is followed only if
  // a browser reads it as this module does.
  const g = parseUrl(given);
  if (g === null || g.userinfo || g.hash !== '') return false;
  if (registered.includes(given)) return true;
  if (g.protocol !== 'http:' || !LOOPBACK_HOSTS.has(g.hostname)) return false;
  return registered.some((r) => {
    const u = parseUrl(r);
    return u !== null && u.protocol === 'http:' && u.hostname === g.hostname && u.pathname === g.pathname && u.search === g.search;
  });
};

/** A Client ID Metadata Document's id: an https URL with a path, no fragment, no credentials. */
export const isMetadataDocumentClientId = (clientId: string): boolean => {
  if (!clientId.startsWith('https://')) return false;
  const u = parseUrl(clientId);
  return u !== null && u.protocol === 'https:' && u.pathname !== '/' && u.hash === '' && !u.userinfo;
};

/** Hex → base64url without padding (the form of a PKCE S256 challenge). */
export const hexToBase64Url = (hex: string): string =>
  btoa(String.fromCharCode(...(hex.match(/../g) ?? []).map((b) => parseInt(b, 16))))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');

/** RFC 7636 §4.1: 43–128 characters of [A-Z a-z 0-9 - . _ ~]. */
export const CODE_VERIFIER_PATTERN: RegExp = /^[A-Za-z0-9\-._~]{43,128}$/;
/** An S256 challenge: base64url of 32 bytes. */
export const CODE_CHALLENGE_PATTERN: RegExp = /^[A-Za-z0-9\-_]{43}$/;
