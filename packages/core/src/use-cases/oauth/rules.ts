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
  readonly username: string;
  readonly hostname: string;
  readonly port: string;
  readonly pathname: string;
  readonly search: string;
  readonly hash: string;
}

const URI = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/;
const AUTHORITY = /^(?:([^@]*)@)?(\[[0-9A-Fa-f:.]+\]|[^:]*)(?::(\d*))?$/;

/** Parses an absolute hierarchical URL; null when it is not one (or has a space or control character). */
const parseUrl = (s: string): UrlParts | null => {
  if (/[\s\x00-\x1f\x7f]/.test(s)) return null;
  const m = URI.exec(s);
  if (m === null) return null;
  const a = AUTHORITY.exec(m[2]!);
  if (a === null || a[2] === '') return null;
  return {
    protocol: `${m[1]!.toLowerCase()}:`,
    username: a[1] ?? '',
    hostname: a[2]!.toLowerCase(),
    port: a[3] ?? '',
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
  const u = parseUrl(uri);
  if (u === null) return 'is not an absolute URL';
  if (u.hash !== '' || uri.includes('#')) return 'must not have a fragment';
  if (u.username !== '') return 'must not carry credentials';
  if (u.protocol === 'https:') return null;
  if (u.protocol === 'http:' && LOOPBACK_HOSTS.has(u.hostname)) return null;
  return 'must be https, or http on localhost / 127.0.0.1 / [::1]';
};

/**
 * Whether `given` matches a registered redirect URI: exactly, or for a loopback http URI with any port
 * (RFC 8252 §7.3: native apps pick a free port at run time).
 */
export const redirectUriMatches = (registered: readonly string[], given: string): boolean => {
  if (registered.includes(given)) return true;
  const g = parseUrl(given);
  if (g === null || g.protocol !== 'http:' || !LOOPBACK_HOSTS.has(g.hostname)) return false;
  return registered.some((r) => {
    const u = parseUrl(r);
    return u !== null && u.protocol === 'http:' && u.hostname === g.hostname && u.pathname === g.pathname && u.search === g.search;
  });
};

/** A Client ID Metadata Document's id: an https URL with a path, no fragment, no credentials. */
export const isMetadataDocumentClientId = (clientId: string): boolean => {
  if (!clientId.startsWith('https://')) return false;
  const u = parseUrl(clientId);
  return u !== null && u.protocol === 'https:' && u.pathname !== '/' && u.hash === '' && u.username === '';
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
