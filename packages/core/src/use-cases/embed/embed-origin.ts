import type { Mode } from '../../model/tenant.js';

const DNS_LABEL = '(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)';
const HOST = `(?:${DNS_LABEL}(?:\\.${DNS_LABEL})*|\\[[0-9a-f:.]+\\])`;
/** `scheme://host[:port]` in the lower-case, ASCII form a browser serializes an origin in. */
const SERIALIZED_ORIGIN = new RegExp(`^(https?)://(${HOST})(?::([1-9][0-9]{0,4}))?$`);
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_PORT: Readonly<Record<string, string>> = { https: '443', http: '80' };

/**
 * Why `origin` cannot be bound to an embedded session, or null when it can (CONTRACT: "Embedded signing").
 * It must be a serialized origin exactly as a browser reports it in `MessageEvent.origin` — lower case, no
 * path (not even `/`), query, fragment, wildcard, user info or default port — because the frame compares
 * it byte for byte and sends it as `frame-ancestors`. `https` only; `http` on a loopback host in test mode.
 */
export const embedOriginProblem = (origin: string, mode: Mode): string | null => {
  if (origin.length > 300) return 'must be at most 300 characters';
  const m = SERIALIZED_ORIGIN.exec(origin);
  if (m === null) return 'must be a serialized origin, scheme://host[:port], in lower case, with no path, query, fragment or wildcard';
  const [, scheme, host, port] = m as unknown as [string, string, string, string | undefined];
  if (port !== undefined && (Number(port) > 65535 || DEFAULT_PORT[scheme] === port)) return 'has a port that a serialized origin does not show';
  if (host.startsWith('[') && !/^\[[0-9a-f]*:[0-9a-f:.]*\]$/.test(host)) return 'has a malformed IPv6 address';
  if (scheme === 'http') {
    if (!LOOPBACK.has(host)) return 'must use https (http only on localhost, 127.0.0.1 or [::1])';
    if (mode !== 'test') return 'must use https in live mode (http on a loopback host is for test mode only)';
  }
  return null;
};
